"""The text columns of a QA run kept while it is scored, as Arrow columns (what ``qa --log`` stores per record).

The run registry keeps, per record, its id, question, gold answers, prediction and raw prediction beside the
metric values (:func:`evaluators.tasks.builtin.qa_run_result`).  The record store keeps only the compact columns
(:mod:`evaluators.qa.store`), so reading these texts afterwards means parsing every line again.  A
:class:`RowCapture` is a :class:`~evaluators.qa.evaluate.RowSink` that takes them from the values the scoring
pass computes anyway, a block at a time, as Arrow record batches (one Python object per block, not per value).

A block whose values Arrow cannot take as text (a raw prediction that is a number or a list, a string that is not
valid Unicode) marks the capture :attr:`RowCapture.complete` ``False``: the caller then reads the records again.
"""

from __future__ import annotations

from operator import is_, itemgetter

#: The captured columns: name -> position in :meth:`evaluators.qa.evaluate.Scorer.values`.
CAPTURED = {"id": 2, "question": 4, "gold_answers": 5, "prediction": 9, "prediction_raw": 7}

#: What a block whose values are not all text renders to (the capture is then incomplete).
_NOT_TEXT = b"-"


def capture_rows(rows: list[tuple], signature: str) -> bytes:
    """A block's captured columns as Arrow IPC stream bytes (a :class:`RowSink` renderer: module-level, so
    worker processes can run it).

    Parameters
    ----------
    rows : list of tuple
        The values of consecutive records (:meth:`evaluators.qa.evaluate.Scorer.values`, field order).
    signature : str
        Unused (the renderer's signature).

    Returns
    -------
    bytes
        One record batch of :data:`CAPTURED` columns; ``b"-"`` when a value is not text.
    """
    import pyarrow as pa

    types = {"gold_answers": pa.list_(pa.string())}
    raws, predictions = itemgetter(CAPTURED["prediction_raw"]), itemgetter(CAPTURED["prediction"])
    arrays = {}
    try:
        for name, i in CAPTURED.items():
            if name == "prediction_raw" and all(map(is_, map(raws, rows), map(predictions, rows))):
                arrays[name] = arrays["prediction"]  # the raw prediction is the prediction (nothing extracted): once
            else:
                arrays[name] = pa.array(list(map(itemgetter(i), rows)), types.get(name, pa.string()))
    except (pa.ArrowException, TypeError, ValueError, UnicodeError):
        return _NOT_TEXT
    batch = pa.record_batch([arrays[name] for name in CAPTURED], names=list(CAPTURED))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


class RowCapture:
    """Collects :func:`capture_rows` blocks in input order; :meth:`sink` is the :class:`RowSink` to score with."""

    def __init__(self) -> None:
        self._blocks: list[bytes] = []

    def sink(self):
        """The :class:`~evaluators.qa.evaluate.RowSink` that fills this capture."""
        from evaluators.qa.evaluate import RowSink

        return RowSink(render=capture_rows, write=self._blocks.append, reset=self._blocks.clear)

    @property
    def complete(self) -> bool:
        """Whether every block was captured (no value that Arrow could not take as text)."""
        return _NOT_TEXT not in self._blocks

    def table(self):
        """The captured columns of every record, in input order, as one ``pyarrow.Table`` (a chunk a block)."""
        import pyarrow as pa

        batches = []
        for data in self._blocks:
            if data:
                batches.extend(pa.ipc.open_stream(data).read_all().to_batches())
        if not batches:
            schema = pa.schema([(n, pa.list_(pa.string()) if n == "gold_answers" else pa.string()) for n in CAPTURED])
            return schema.empty_table()
        return pa.Table.from_batches(batches)


__all__ = ["CAPTURED", "RowCapture", "capture_rows"]
