"""`subctx review`: a Textual app to review context-dependent choices (pronouns, ты/вы)."""
