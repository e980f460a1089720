"""``judge run`` against the local stub judge server (never the network) with the reply cache, and ``judge compare``
on the shipped demo: values checked against the stub's rules, scikit-learn and scipy."""

import json

import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from evaluators.cli import main
from evaluators.demo import demo_path
from evaluators.judgelab.inputs import read_labels, read_verdicts
from tests.helpers.judge_stub import StubJudge, StubJudgeServer


def _demo(name):
    return demo_path("judgelab", name)


def _truth():
    return {lab.item_id: lab.label for lab in read_labels(_demo("labels.jsonl").read_bytes()).labels}


def _items_file(tmp_path):
    """The demo's items with ``[item <id>]`` in the question: the stub server reads the item from the prompt."""
    rows = [json.loads(line) for line in _demo("items.jsonl").read_text(encoding="utf-8").splitlines()]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({**r, "question": f"[item {r['item_id']}] {r['question']}"},
                                       ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path, {r["item_id"]: r["answer"] for r in rows}


def test_judge_run_through_the_stub_server_with_the_cache(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("EVALBOARD_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("EVALBOARD_JUDGE_MODEL", raising=False)
    items, answers = _items_file(tmp_path)
    truth = _truth()
    stub = StubJudge(sensitivity=0.9, specificity=0.88, length_bias=0.25, length_centre=80, seed=2)
    template = _demo("prompt_v2.txt")  # "VERSION: v2": the server answers by this stub's rules
    out, cache = tmp_path / "v2.jsonl", tmp_path / "judge_calls.sqlite"
    with StubJudgeServer({"v2": stub}, truth) as server:
        args = ["judge", "run", "--items", str(items), "--template", str(template), "--base-url", server.base_url,
                "--model", "stub-judge", "--cache", str(cache), "--out", str(out), "--name", "v2 strict 中文"]
        assert main(args + ["--format", "json"]) == 0
        first = json.loads(capsys.readouterr().out)
        assert server.requests == 200 and first["cached"] == 0 and first["errors"] == {}
        # the answer's length as the server measured it feeds the stub's length bias
        expected = {i: stub.verdict(i, truth[i], len(answers[i])) for i in truth}
        assert first["verdicts"] == expected
        written = read_verdicts(out.read_bytes(), str(out))
        assert len(written.judges) == 1 and not written.issues
        version, verdicts = written.judges[0]
        assert verdicts == expected and version.label == "v2 strict 中文" and version.model == "stub-judge"
        assert version.prompt_hash == first["version"]["prompt_hash"]
        assert dict(version.parameters) == {"max_tokens": 10, "temperature": 0}
        # the same run again, the endpoint from the environment: every reply from the cache file, no request sent
        before = out.read_bytes()
        monkeypatch.setenv("EVALBOARD_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("EVALBOARD_JUDGE_MODEL", "stub-judge")
        env_args = [a for a in args if a not in ("--base-url", server.base_url, "--model", "stub-judge")]
        assert main(env_args) == 0
        text = capsys.readouterr().out
        assert server.requests == 200 and "replies from the cache: 200" in text
        assert out.read_bytes() == before
        # ... and without the cache: 200 requests more, the same verdicts
        no_cache = [a for a in env_args if a not in ("--cache", str(cache))]
        assert main(no_cache) == 0 and server.requests == 400 and out.read_bytes() == before
        assert "replies from the cache: 0" in capsys.readouterr().out
    # the demo's v2 verdicts were made by the same stub: the run reproduces them
    shipped = dict(read_verdicts(_demo("verdicts_v2.jsonl").read_bytes()).judges[0][1])
    assert shipped == expected


def test_judge_run_needs_an_endpoint(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("EVALBOARD_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("EVALBOARD_JUDGE_MODEL", raising=False)
    items, _ = _items_file(tmp_path)
    code = main(["judge", "run", "--items", str(items), "--template", str(_demo("prompt_v1.txt")),
                 "--out", str(tmp_path / "o.jsonl")])
    assert code == 2 and "needs an endpoint" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_judge_compare_on_the_demo(capsys):
    a = read_verdicts(_demo("verdicts_v1.jsonl").read_bytes()).judges[0][1]
    b = read_verdicts(_demo("verdicts_v3.jsonl").read_bytes()).judges[0][1]
    assert main(["judge", "compare", "--verdicts", str(_demo("verdicts_v1.jsonl")), "--verdicts",
                 str(_demo("verdicts_v3.jsonl")), "--labels", str(_demo("labels.jsonl")), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ids = sorted(a)
    up = [i for i in ids if a[i] == 0 and b[i] == 1]
    down = [i for i in ids if a[i] == 1 and b[i] == 0]
    assert data["before"] == "v1 plain" and data["after"] == "v3 few-shot" and data["n_items"] == 200
    assert data["drift"]["up_ids"] == up and data["drift"]["down_ids"] == down
    assert data["drift"]["moved_share"] == pytest.approx((len(up) + len(down)) / 200, abs=1e-12)
    assert data["agreement"] == pytest.approx(1 - (len(up) + len(down)) / 200, abs=1e-12)
    kappa = cohen_kappa_score([a[i] for i in ids], [b[i] for i in ids])
    assert data["cohen_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
    assert data["cohen_kappa"]["ci_low"] < kappa < data["cohen_kappa"]["ci_high"]
    mc = data["drift"]["mcnemar"]
    assert (mc["only_a"], mc["only_b"]) == (len(down), len(up))
    assert mc["p_value"] == pytest.approx(binomtest(len(up), len(up) + len(down), 0.5).pvalue, abs=1e-12)
    # text: the moved ids under their direction
    assert main(["judge", "compare", "--verdicts", str(_demo("verdicts_v1.jsonl")), "--verdicts",
                 str(_demo("verdicts_v3.jsonl"))]) == 0
    text = capsys.readouterr().out
    assert f"moved: {len(up) + len(down)} " in text and f"wrong -> right: {', '.join(up[:40])}" in text


def test_judge_compare_needs_two_versions(capsys):
    assert main(["judge", "compare", "--verdicts", str(_demo("verdicts_v1.jsonl"))]) == 2
    assert "needs two judge versions, found 1 (v1 plain)" in capsys.readouterr().err


def test_calibrate_labels_from_a_session_refuses_what_it_cannot_use(tmp_path, capsys):
    from evaluators.review import ReviewStore

    verdicts = str(_demo("verdicts_v1.jsonl"))
    assert main(["judge", "calibrate", "--verdicts", verdicts]) == 2
    assert "needs --labels (or --session)" in capsys.readouterr().err
    assert main(["judge", "calibrate", "--labels", str(_demo("labels.jsonl")), "--session", "s",
                 "--verdicts", verdicts]) == 2
    assert "from --labels or from --session, not both" in capsys.readouterr().err
    assert main(["judge", "calibrate", "--db", str(tmp_path / "none.sqlite"), "--session", "s",
                 "--verdicts", verdicts]) == 2
    assert "no review database at" in capsys.readouterr().err
    ReviewStore(tmp_path / "review.sqlite").engine.dispose()
    assert main(["judge", "calibrate", "--db", str(tmp_path / "review.sqlite"), "--session", "无此会话",
                 "--verdicts", verdicts]) == 2
    assert "no review session named '无此会话'" in capsys.readouterr().err
