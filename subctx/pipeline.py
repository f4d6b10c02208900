"""The old import path of document decoding (subctx.decoding), kept for one change."""

from subctx.context import build_request, document_contexts
from subctx.decoding import SCHEDULES, DecodeOptions, DocumentResult, translate_documents

__all__ = ["SCHEDULES", "DecodeOptions", "DocumentResult", "build_request",
           "document_contexts", "translate_documents"]
