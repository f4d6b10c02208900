"""Run an iterator in a background thread, a few items ahead of its consumer.

The trainer's batches are built in Python (rendering, collation); while the main thread waits
for the GPU (one sync per step) the next batches are ready."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")
_END = object()


class Prefetcher(Generic[T]):
    """Iterate `source` in a daemon thread, at most `depth` items ahead; `close()` stops it
    (the thread may have made up to `depth` items nobody takes). An exception in the source
    is raised in the consumer."""

    def __init__(self, source: Iterator[T], depth: int = 4):
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(source,), daemon=True)
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, source: Iterator[T]) -> None:
        try:
            for item in source:
                if not self._put(item):
                    return
            self._put(_END)
        except BaseException as error:  # handed to the consumer, raised there
            self._put(error)

    def __iter__(self) -> Prefetcher[T]:
        return self

    def __next__(self) -> T:
        item = self._queue.get()
        if item is _END:
            raise StopIteration
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def __enter__(self) -> Prefetcher[T]:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
