"""The hostile-input corpus: manifest, corpus folder and the 20 MB one-line file made at run time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
MANIFEST = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))["cases"]
DEMO_MEMORY = HERE.parents[1] / "evaluators" / "demo" / "memory"
GOOD_QA = [{"id": f"h{i}", "question": "q", "answer": "北京", "prediction": "北京"} for i in range(3)]


def make_huge(folder: Path) -> None:
    """Under ``folder``: ``qa/huge_line.jsonl``, 3 good lines and one 20 MB record (a 20 MB prediction), and
    ``memory/huge_line.jsonl``, the memory demo's 25 results and one more with a 20 MB prediction."""
    path = folder / "qa" / "huge_line.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    big = json.dumps({"id": "huge", "question": "q", "answer": "a", "prediction": "x " * (10 << 20)})
    path.write_text("\n".join([*(json.dumps(r, ensure_ascii=False) for r in GOOD_QA), big]) + "\n", encoding="utf-8")
    demo = (DEMO_MEMORY / "demo_results.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(demo[0])
    big = json.dumps({**first, "question_id": "huge", "prediction": "x " * (10 << 20)}, ensure_ascii=False)
    path = folder / "memory" / "huge_line.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*(ln for ln in demo if ln.strip()), big]) + "\n", encoding="utf-8")


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory) -> Path:
    """A copy of the committed corpus (3 MB) with the 20 MB one-line file added."""
    root = tmp_path_factory.mktemp("hostile") / "corpus"
    shutil.copytree(CORPUS, root)
    make_huge(root)
    return root
