"""The run registry (evaluators.runs.store): logging, reading back bit for bit, filters, GT versions, the
accepted baseline, deletion, digests checked, and a lossless export / import.  SQLite always, PostgreSQL
when EVALBOARD_TEST_DATABASE_URL is set (the review_url fixture)."""

from __future__ import annotations

import base64
import io
import json
import math
import random
import struct

import pytest
import sqlalchemy as sa

from evaluators.run_result import ItemTable, RunResult
from evaluators.runs import CorruptBlob, RunExists, RunStore
from evaluators.runs.tables import blobs_table

GT = "a" * 64
#: Values whose float64 bits must survive: a third, -0.0, the smallest subnormal, 1 - 2**-53, None.
HARD = (1 / 3, -0.0, 5e-324, 1 - 2 ** -53, None, 0.1 + 0.2)


def _result(ids=("q1", "q2", "q3", "q4", "q5", "q6"), system="sys-a", em=HARD, task="qa", lang=None,
            predictions="p" * 64) -> RunResult:
    n = len(ids)
    em = tuple(em)[:n]
    lang = lang or tuple(("en", "zh")[i % 2] for i in range(n))
    table = ItemTable(tuple(ids), (system,) * n, {"exact_match": em, "token_f1": tuple(0.5 for _ in range(n))},
                      {"lang": lang}, {"question": tuple(f"问题 {i} / question {i}" for i in range(n)),
                                       "ground_truth": tuple(("北京", "Beijing") for _ in range(n))})
    return RunResult(task, table, unit="record", config={"lang": "auto", "ci_resamples": 0}, signature="sig v1",
                     digests={"predictions": predictions})


@pytest.fixture
def store(review_url):
    return RunStore(review_url)


def _bits(values):
    return [None if v is None else struct.pack("<d", v) for v in values]


def test_a_logged_run_reads_back_bit_for_bit(store):
    result = _result()
    record = store.log_run(result, name="v1", who="alice", tags=["model=gpt", "seed=1"], gt_name="hotpot",
                           gt_digest=GT, created_at="2026-01-01T00:00:00.000000+00:00")
    assert (record.name, record.task, record.unit, record.dataset, record.dataset_digest, record.dataset_version,
            record.patch_digests, record.predictions_digest, record.who, record.tags, record.accepted,
            record.n_items, record.systems, record.metrics) == (
        "v1", "qa", "record", "hotpot", GT, 0, (), "p" * 64, "alice", {"model": "gpt", "seed": "1"}, False, 6,
        ("sys-a",), ("exact_match", "token_f1"))
    assert record.items_digest == result.items.digest()
    back = store.load("v1")
    assert _bits(back.items.values["exact_match"]) == _bits(HARD)  # -0.0 stays -0.0, 5e-324 stays
    assert back.items.item_id == result.items.item_id and back.items.slices == result.items.slices
    assert back.items.digest() == result.items.digest()
    assert back.items.fields["ground_truth"][0] == ["北京", "Beijing"]  # JSON: a tuple comes back as a list
    assert (back.task, back.unit, back.config, back.signature, dict(back.digests)) == (
        "qa", "record", {"lang": "auto", "ci_resamples": 0}, "sig v1", {"predictions": "p" * 64})
    # the summary as logged: exact_match over the 5 defined values, mean = (1/3 + 0 + 5e-324 + (1 - 2**-53) + 0.3...)/5
    (overall,) = [r for r in record.summary if r["metric"] == "exact_match" and r["slice"] == ""]
    assert overall["n"] == 5 and overall["n_items"] == 6
    assert overall["mean"] == pytest.approx((1 / 3 + 0 + 0 + 1 + 0.3) / 5)
    with pytest.raises(RunExists, match="already logged"):
        store.log_run(result, name="v1", who="bob", gt_name="hotpot", gt_digest=GT)
    with pytest.raises(KeyError, match="no run named 'nope'"):
        store.load("nope")


def test_filters_versions_and_the_accepted_baseline(store):
    t = ["2026-01-0%dT00:00:00.000000+00:00" % d for d in range(1, 6)]
    store.log_run(_result(system="A"), name="a1", who="x", tags={"seed": "1"}, gt_name="hp", gt_digest=GT,
                  created_at=t[0])
    store.log_run(_result(system="B"), name="b1", who="x", tags={"seed": "2"}, gt_name="hp", gt_digest=GT,
                  created_at=t[1])
    p1 = store.log_run(_result(system="A"), name="a2", who="x", gt_name="hp", gt_digest=GT, patch_digests=["1" * 64],
                       created_at=t[2])
    p2 = store.log_run(_result(system="A"), name="a3", who="x", gt_name="hp", gt_digest=GT,
                       patch_digests=["1" * 64, "2" * 64], created_at=t[3])
    other = store.log_run(_result(system="A", task="memory"), name="m1", who="x", gt_name="mem",
                          gt_digest="b" * 64, created_at=t[4])
    assert (p1.dataset_version, p1.patch_digests) == (1, ("1" * 64,))
    assert (p2.dataset_version, p2.patch_digests) == (2, ("1" * 64, "2" * 64))
    assert other.dataset_version == 0
    # the same chain again is the same version
    again = store.log_run(_result(system="B"), name="b2", who="x", gt_name="renamed", gt_digest=GT,
                          patch_digests=["1" * 64], created_at=t[4])
    assert (again.dataset, again.dataset_version) == ("hp", 1)  # a dataset keeps its first name

    def names(**kw):
        return [r.name for r in store.runs(**kw)]

    assert names() == ["a1", "b1", "a2", "a3", "b2", "m1"]  # time order, then name
    assert names(task="memory") == ["m1"]
    assert names(dataset="hp") == names(dataset=GT) == names(dataset=GT[:8]) == ["a1", "b1", "a2", "a3", "b2"]
    assert names(system="B") == ["b1", "b2"]
    assert names(tag="seed") == ["a1", "b1"] and names(tag="seed=2") == ["b1"]
    assert names(since=t[3]) == ["a3", "b2", "m1"]
    assert names(since="2026-01-04T00:00:00Z") == names(since="2026-01-04") == ["a3", "b2", "m1"]
    assert names(since="2026-01-04T01:00:00+01:00") == ["a3", "b2", "m1"]  # 00:00 UTC
    with pytest.raises(ValueError, match="ISO 8601"):
        store.runs(since="last week")
    late = store.log_run(_result(), name="z", who="x", gt_name="hp", gt_digest=GT,
                         created_at="2026-01-06T01:00:00+01:00")
    assert late.created_at == "2026-01-06T00:00:00.000000+00:00"  # kept in UTC: text order is time order
    store.delete("z")
    assert [d["versions"] for d in store.datasets() if d["name"] == "hp"] == [[
        {"version": 0, "patch_digests": []}, {"version": 1, "patch_digests": ["1" * 64]},
        {"version": 2, "patch_digests": ["1" * 64, "2" * 64]}]]
    store.accept("a1")
    store.accept("m1")
    assert names(accepted=True) == ["a1", "m1"]
    store.accept("b2")  # the baseline of qa on hp moves; memory's stays
    assert names(accepted=True) == ["b2", "m1"]
    with pytest.raises(KeyError):
        store.accept("zz")


def _blob_count(store) -> int:
    with store.engine.connect() as c:
        return c.execute(sa.select(sa.func.count()).select_from(blobs_table)).scalar()


def test_shared_columns_are_kept_once_and_deleted_with_their_last_run(store):
    store.log_run(_result(em=(1.0,) * 6), name="r1", who="x", gt_name="hp", gt_digest=GT)
    n1 = _blob_count(store)  # item_id, system, lang, exact_match, token_f1, question, ground_truth
    assert n1 == 7
    store.log_run(_result(em=(0.0,) * 6), name="r2", who="x", gt_name="hp", gt_digest=GT)
    assert _blob_count(store) == n1 + 1  # only exact_match differs
    store.delete("r1")
    assert _blob_count(store) == n1  # r1's exact_match column went, the shared ones stay
    assert store.load("r2").items.values["exact_match"] == (0.0,) * 6
    store.delete("r2")
    assert _blob_count(store) == 0 and store.runs() == ()
    with pytest.raises(KeyError):
        store.delete("r2")


def test_a_blob_whose_bytes_do_not_match_its_digest_is_refused(store):
    store.log_run(_result(), name="r1", who="x", gt_name="hp", gt_digest=GT)
    (column_digest,) = [d for _, name, d in json.loads(_columns(store, "r1")) if name == "exact_match"]
    with store.engine.begin() as c:
        data = c.execute(sa.select(blobs_table.c.data).where(blobs_table.c.digest == column_digest)).scalar()
        c.execute(blobs_table.update().where(blobs_table.c.digest == column_digest).values(data=data[:-1] + b"\0"))
    with pytest.raises(CorruptBlob, match="do not match their digest"):
        store.load("r1")


def _columns(store, name):
    from evaluators.runs.tables import runs_table

    with store.engine.connect() as c:
        return c.execute(sa.select(runs_table.c.columns).where(runs_table.c.name == name)).scalar()


def test_export_import_export_gives_the_same_bytes(store, tmp_path):
    store.log_run(_result(system="A"), name="a", who="x", tags=["k=v"], gt_name="hp", gt_digest=GT,
                  created_at="2026-01-01T00:00:00.000000+00:00")
    store.log_run(_result(system="B", em=(0.0, 1.0) * 3), name="b", who="y", gt_name="hp", gt_digest=GT,
                  patch_digests=["1" * 64], created_at="2026-01-02T00:00:00.000000+00:00")
    store.accept("b")
    first = io.BytesIO()
    assert store.export(first) == 2
    empty = RunStore(f"sqlite:///{tmp_path / 'empty.sqlite'}")
    assert empty.import_(io.BytesIO(first.getvalue())) == 2
    assert empty.import_(io.BytesIO(first.getvalue())) == 0  # idempotent
    second = io.BytesIO()
    empty.export(second)
    assert second.getvalue() == first.getvalue()
    assert empty.get("b").accepted and empty.get("b").patch_digests == ("1" * 64,)
    assert _bits(empty.load("a").items.values["exact_match"]) == _bits(HARD)


def _tamper(export: bytes, change) -> bytes:
    lines = export.split(b"\n")
    out = []
    for raw in lines:
        line = json.loads(raw) if raw else None
        if line and "blob" in line:
            change(line["blob"])
            raw = json.dumps(line, sort_keys=True, separators=(",", ":")).encode()
        out.append(raw)
    return b"\n".join(out)


def test_an_import_whose_values_do_not_match_their_digest_is_refused(store, tmp_path):
    store.log_run(_result(), name="a", who="x", gt_name="hp", gt_digest=GT)
    buf = io.BytesIO()
    store.export(buf)
    target = RunStore(f"sqlite:///{tmp_path / 'target.sqlite'}")

    def flip_bytes(blob):  # bytes that no longer match their address
        data = bytearray(base64.b64decode(blob["data"]))
        data[-1] ^= 1
        blob["data"] = base64.b64encode(bytes(data)).decode()

    with pytest.raises(CorruptBlob, match="do not match their digest"):
        target.import_(io.BytesIO(_tamper(buf.getvalue(), flip_bytes)))

    from evaluators.runs.columns import blob_digest, decode_column, encode_column

    def other_values(blob):  # a consistent blob whose values are not the run's: the run's digest catches it
        data = base64.b64decode(blob["data"])
        try:
            values = decode_column("value", data)
        except (CorruptBlob, TypeError, ValueError):
            return
        if len(values) == 6 and values[0] == 1 / 3:  # the exact_match column
            new = encode_column("value", [0.0] + values[1:])
            blob["data"], blob["digest"] = base64.b64encode(new).decode(), blob_digest(new)
            other_values.digest = (blob_digest(data), blob["digest"])

    text = _tamper(buf.getvalue(), other_values)
    old, new = other_values.digest
    text = text.replace(old.encode(), new.encode())  # the run's manifest points at the new blob
    with pytest.raises(CorruptBlob, match="do not match the run's digest"):
        target.import_(io.BytesIO(text))
    assert target.runs() == ()  # nothing written
    with pytest.raises(ValueError, match="not an EvalBoard runs export"):
        target.import_(io.BytesIO(b'{"x": 1}\n'))


def test_bytes_per_item_and_metric(store):
    """Storage of a 10,000-item run with 4 metrics (worst case: one metric continuous, every value distinct), ids
    random 24-hex strings: the new bytes (every column of the first run) per item and metric, at most 30."""
    rng = random.Random(7)
    n = 10_000
    ids = tuple(f"{rng.getrandbits(96):024x}" for _ in range(n))
    values = {"exact_match": tuple(float(rng.random() < 0.7) for _ in range(n)),
              "token_f1": tuple(rng.choice((0.0, 0.25, 0.5, 2 / 3, 1.0)) for _ in range(n)),
              "judge": tuple(float(rng.randint(1, 5)) / 5 for _ in range(n)),
              "similarity": tuple(rng.random() for _ in range(n))}
    table = ItemTable(ids, ("sys",) * n, values, {"lang": tuple(rng.choice(("en", "zh")) for _ in range(n))})
    store.log_run(RunResult("qa", table), name="big", who="x", gt_name="hp", gt_digest=GT)
    sizes = store.blob_bytes("big")
    per = sum(sizes.values()) / (n * 4)
    # item_id: 24 hex chars ~ 12 B of entropy each; similarity: 8 B of random mantissa; the rest near a bit
    assert per <= 30, sizes
    assert sizes["similarity"] <= 8.2 * n and sizes["exact_match"] < n  # float64 kept, few values: < 1 B each
    back = store.load("big")
    assert back.items.values["similarity"] == values["similarity"]
    assert not any(isinstance(v, float) and math.isnan(v) for v in back.items.values["similarity"])


def test_patch_bytes_are_kept_with_their_version_exported_and_not_collected(store, tmp_path):
    from evaluators.runs.columns import blob_digest

    patch = b'{"format": "evalboard-gt-patch"}\n'
    digest = blob_digest(patch)
    with pytest.raises(ValueError, match="not those of a patch"):
        store.log_run(_result(), name="bad", who="x", gt_name="hp", gt_digest=GT, patch_digests=["1" * 64],
                      patches={digest: patch})
    store.log_run(_result(), name="p", who="x", gt_name="hp", gt_digest=GT, patch_digests=[digest],
                  patches={digest: patch})
    assert store.current_version("hp") == (1, (digest,)) and store.patch_bytes(digest) == patch
    buf = io.BytesIO()
    store.export(buf)
    other = RunStore(f"sqlite:///{tmp_path / 'o.sqlite'}")
    other.import_(io.BytesIO(buf.getvalue()))
    assert other.patch_bytes(digest) == patch
    store.delete("p")
    assert store.patch_bytes(digest) == patch  # the version stays, and its patch with it
    with pytest.raises(KeyError, match="not in the registry"):
        store.patch_bytes("0" * 64)


def test_writers_at_once_number_versions_once(review_url):
    """Six threads log runs of one dataset at once, half with a new patch: one dataset, versions 0 and 1, no error."""
    import threading

    errors = []

    def log(k):
        try:
            RunStore(review_url).log_run(_result(system=f"s{k}"), name=f"r{k}", who="x", gt_name="hp", gt_digest=GT,
                                         patch_digests=["1" * 64] if k % 2 else [])
        except Exception as exc:  # noqa: BLE001 - collected and shown by the assertion
            import traceback

            errors.append(traceback.format_exc())

    RunStore(review_url)  # the schema first: concurrent creation is the review tests' (test_review_engine.py)
    threads = [threading.Thread(target=log, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    store = RunStore(review_url)
    assert sorted(r.dataset_version for r in store.runs()) == [0, 0, 0, 1, 1, 1]
    (dataset,) = store.datasets()
    assert [v["version"] for v in dataset["versions"]] == [0, 1]


def test_a_partial_load_reads_the_columns_asked_for_and_checks_their_bytes(store):
    store.log_run(_result(), name="r1", who="x", gt_name="hp", gt_digest=GT)
    part = store.load("r1", ["exact_match", "lang"])
    assert tuple(part.items.values) == ("exact_match",) and tuple(part.items.slices) == ("lang",)
    assert part.items.fields == {} and _bits(part.items.values["exact_match"]) == _bits(HARD)
    with pytest.raises(KeyError, match="no column 'judge'"):
        store.load("r1", ["judge"])
    (digest,) = [d for _, name, d in json.loads(_columns(store, "r1")) if name == "exact_match"]
    with store.engine.begin() as c:
        c.execute(blobs_table.update().where(blobs_table.c.digest == digest).values(data=b"not parquet"))
    with pytest.raises(CorruptBlob, match="do not match their digest"):
        store.load("r1", ["exact_match"])
    assert store.load("r1", ["token_f1"]).items.values["token_f1"] == (0.5,) * 6  # the other columns are fine


def test_input_files_are_kept_once_exported_and_deleted_with_their_last_run(store, tmp_path):
    """The bytes of a run's input files (for re-scoring, ``--log`` of testsets/memory/...): content-addressed, kept
    once for two runs, carried by an export, collected with the last run that names them."""
    from evaluators.runs.columns import blob_digest
    from evaluators.runs.store import kept_inputs

    items, answers = '{"items": [{"id": "q1", "keywords": ["北京"]}]}'.encode(), b'{"q1": "Beijing"}'
    named = {"input:items": blob_digest(items), "input_name:items": "set.json",
             "input:answers": blob_digest(answers), "input_name:answers": "a.json"}

    def result():
        r = _result()
        return RunResult(r.task, r.items, unit=r.unit, config=r.config, digests={**r.digests, **named})

    with pytest.raises(ValueError, match="not those of an input"):
        store.log_run(result(), name="bad", who="x", gt_name="hp", gt_digest=GT, inputs={blob_digest(items): answers})
    n_blobs = _blob_count(store)
    for name in ("one", "two"):
        store.log_run(result(), name=name, who="x", gt_name="hp", gt_digest=GT,
                      inputs={blob_digest(items): items, blob_digest(answers): answers})
    assert n_blobs == 0 and _blob_count(store) == 7 + 2  # the 7 columns and the two files, once for both runs
    assert kept_inputs(store.load("two").digests) == {"items": ("set.json", blob_digest(items)),
                                                      "answers": ("a.json", blob_digest(answers))}
    buf = io.BytesIO()
    store.export(buf)
    other = RunStore(f"sqlite:///{tmp_path / 'o.sqlite'}")
    other.import_(io.BytesIO(buf.getvalue()))
    assert other.input_bytes(blob_digest(items)) == items
    store.delete("one")
    assert store.input_bytes(blob_digest(answers)) == answers  # "two" still names it
    store.delete("two")
    with pytest.raises(KeyError, match="not in the registry"):
        store.input_bytes(blob_digest(answers))
    assert _blob_count(store) == n_blobs
