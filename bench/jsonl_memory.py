"""Peak memory of scoring a 200 MB JSONL file of QA predictions (target: <= 3x the file size).

    python bench/jsonl_memory.py [--mb 200] [--keep]

Writes a JSONL file of HotpotQA-style prediction records (question, answer, final_answer,
system; about 330 bytes a record, ids made unique) into a temporary folder, then measures
in fresh processes:

- ``cli``: ``python -m evaluators qa --input FILE`` (streamed from disk line by line);
- ``upload``: the dashboard's path: the whole file held in memory as an upload
  (``io.BytesIO``), scored by ``evaluate_qa_file(upload)`` without a second copy.

Peak resident memory comes from the operating system (``ru_maxrss`` of the child).  No
assertion: the numbers are for the team to read.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SAMPLE = [
    {"system": "Decomp_RelaxedInitial", "question": "What was the name of the ship the explorer sailed on when "
     "he reached the eastern coast of the peninsula?", "question_type": "bridge", "answer": "the Endeavour",
     "final_answer": "Endeavour"},
    {"system": "FullPipeline", "question": "Which of the two films was released first, the documentary about "
     "the river or the drama set in the mountains?", "question_type": "comparison", "answer": "The River",
     "final_answer": "the mountain drama"},
    {"system": "SearchFallback", "question": "长城最东端的关隘叫什么名字？", "question_type": "bridge",
     "answer": "山海关", "final_answer": "山海关"},
]

UPLOAD = """
import io, sys
sys.path.insert(0, {root!r})
from evaluators.qa import evaluate_qa_file
buf = io.BytesIO(open({path!r}, "rb").read())
report = evaluate_qa_file(buf, name="big.jsonl")
print(report.n_records)
"""


def write_file(path: Path, mb: int) -> int:
    n = 0
    size = 0
    with open(path, "w", encoding="utf-8") as f:
        while size < mb * 1024 * 1024:
            rec = dict(SAMPLE[n % len(SAMPLE)], question_id=f"q{n:08d}")
            line = json.dumps(rec, ensure_ascii=False) + "\n"
            f.write(line)
            size += len(line.encode("utf-8"))
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--keep", action="store_true", help="keep the generated file")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="evalboard-jsonl-"))
    path = tmp / "big.jsonl"
    n = write_file(path, args.mb)
    size_mb = path.stat().st_size / 1024 / 1024
    print(f"{path.name}: {size_mb:.0f} MiB, {n:,} records")
    # Each measurement in its own child so ru_maxrss is that child's peak alone.
    for label, cmd in (
        ("upload (dashboard path, file held in memory)",
         [sys.executable, "-c", UPLOAD.format(root=str(ROOT), path=str(path))]),
        ("cli (streamed from disk)", [sys.executable, "-m", "evaluators", "qa", "--input", str(path)]),
    ):
        code = f"import resource, subprocess, sys; subprocess.run({cmd!r}, stdout=subprocess.DEVNULL); " \
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
        peak = int(out.stdout.strip().splitlines()[-1]) / 1024
        print(f"{label:48s} peak {peak:7.0f} MiB = {peak / size_mb:.2f}x the file (target <= 3x)")
    if not args.keep:
        os.remove(path)
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
