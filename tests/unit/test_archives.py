"""Zip archives and files from disk read within limits (evaluators.io.sources): bombs, traversal names,
lying headers, encrypted and corrupt members; the good files of the same upload are still scored."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

from evaluators.io import InputFile, collect_paths, expand_archives, pair_files
from evaluators.io import sources
from evaluators.narrative.batch import evaluate_batch
from tests.conftest import ROOT

DEMO = ROOT / "evaluators" / "demo" / "narrative"
GT = (DEMO / "EN_001_lantern_keeper_v3.json").read_bytes()
PRED = (DEMO / "EN_001_lantern_keeper_prediction.json").read_bytes()


def make_zip(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def bomb(size: int, name: str = "bomb_v3.json") -> bytes:
    """A zip whose one member is ``size`` bytes of spaces (deflate packs ~1000:1)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open(name, "w", force_zip64=True) as member:
            chunk = b" " * (1 << 20)
            for _ in range(size >> 20):
                member.write(chunk)
    return buf.getvalue()


def test_a_member_over_the_ratio_is_refused_and_the_good_member_kept():
    data = make_zip({"EN_001_lantern_keeper_v3.json": GT, "fluff_v3.json": b" " * (3 << 20)})
    files = expand_archives([InputFile("gt.zip", data)])
    good, bad = files
    assert good.name == "gt.zip/EN_001_lantern_keeper_v3.json" and good.data == GT and good.issue is None
    assert bad.name == "gt.zip/fluff_v3.json" and bad.data == b""
    # 3 MiB of spaces deflate to about 3 KiB: a ratio of about 1000 to 1, over the limit of 200
    assert "to 1" in bad.issue.message and "over the limit of 200 to 1" in bad.issue.message
    assert bad.issue.file == "gt.zip/fluff_v3.json"


def test_the_gib_bomb_is_refused_from_its_header_without_reading_it(monkeypatch):
    data = bomb(1 << 30)  # 1 GiB declared, about 1 MB on disk
    assert len(data) < 2 * 1024 * 1024
    monkeypatch.setattr(sources, "_read_capped", lambda *a: pytest.fail("a refused member was read"))
    [f] = expand_archives([InputFile("upload.zip", data)])
    assert f.data == b"" and f.issue.file == "upload.zip"  # over the archive's total: nothing of it is read
    assert "declare 1,073,741,824 bytes uncompressed, over the limit of 536,870,912" in f.issue.message
    # with a larger total allowed, the member's own limit refuses it, still from the header
    monkeypatch.setattr(sources, "MAX_ARCHIVE_BYTES", 2 << 30)
    [f] = expand_archives([InputFile("upload.zip", data)])
    assert f.issue.file == "upload.zip/bomb_v3.json"
    assert "declares 1,073,741,824 bytes uncompressed, over the limit of 209,715,200" in f.issue.message


def test_the_bomb_stays_far_under_500_mb_of_memory(tmp_path):
    """Peak memory (KiB) of a fresh interpreter expanding the 1 GiB bomb."""
    path = tmp_path / "bomb.zip"
    path.write_bytes(bomb(1 << 30))
    code = textwrap.dedent(f"""
        from evaluators.io import collect_paths
        files = collect_paths({str(path)!r})
        assert files[0].issue is not None and files[0].data == b""
        # VmHWM: this process image's peak RSS (ru_maxrss would include the forking test runner's)
        print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")))
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert int(out.stdout.strip()) < 300 * 1024


def test_too_many_members_and_too_much_in_total_refuse_the_whole_archive(monkeypatch):
    monkeypatch.setattr(sources, "MAX_ZIP_MEMBERS", 5)
    many = make_zip({f"s{i}_v3.json": b"{}" for i in range(6)})
    [f] = expand_archives([InputFile("many.zip", many)])
    assert f.name == "many.zip" and "6 members, over the limit of 5" in f.issue.message

    monkeypatch.setattr(sources, "MAX_ARCHIVE_BYTES", 1000)
    big = make_zip({"a_v3.json": b"1" * 600, "b_v3.json": b"2" * 600})  # 1,200 declared > 1,000
    [f] = expand_archives([InputFile("big.zip", big)])
    assert "declare 1,200 bytes uncompressed, over the limit of 1,000" in f.issue.message


def test_many_small_members_that_inflate_together_refuse_the_archive():
    # 40 members of 512 KiB of spaces: each under the 1 MiB ratio floor, 20 MiB together from about 20 KiB
    data = make_zip({f"m{i}_v3.json": b" " * (512 << 10) for i in range(40)})
    [f] = expand_archives([InputFile("many.zip", data)])
    assert f.name == "many.zip" and f.data == b""
    assert "bytes), over the limit of 200 to 1" in f.issue.message and "20,971,520 bytes" in f.issue.message


def test_a_header_that_lies_about_the_size_is_caught_while_reading(monkeypatch):
    data = bytearray(make_zip({"lie_v3.json": b"x" * 5000}, zipfile.ZIP_STORED))
    monkeypatch.setattr(sources, "MAX_MEMBER_BYTES", 4096)
    # declared uncompressed size 5000 -> 100 in the local header and the central directory
    data = bytes(data).replace((5000).to_bytes(4, "little") * 2, (5000).to_bytes(4, "little") + (100).to_bytes(4, "little"))
    data = data.replace((5000).to_bytes(4, "little") + (5000).to_bytes(4, "little"),
                        (5000).to_bytes(4, "little") + (100).to_bytes(4, "little"))
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.infolist()[0].file_size == 100  # the header now says 100 bytes
    [f] = expand_archives([InputFile("lie.zip", data)])
    assert f.data == b"" and f.issue is not None and f.issue.file == "lie.zip/lie_v3.json"


def test_traversal_names_are_shown_safely_and_scored():
    data = make_zip({"../../etc/EN_001_lantern_keeper_v3.json": GT, "/abs/EN_001_lantern_keeper_prediction.json": PRED,
                     "..\\..\\win\\x_v3.json": b"{}"})
    names = [f.name for f in expand_archives([InputFile("t.zip", data)])]
    assert names == ["t.zip/etc/EN_001_lantern_keeper_v3.json", "t.zip/abs/EN_001_lantern_keeper_prediction.json",
                     "t.zip/win/x_v3.json"]


def test_encrypted_and_corrupt_members_are_located_and_the_rest_scored():
    good = make_zip({"EN_001_lantern_keeper_v3.json": GT, "zz_v3.json": GT}, zipfile.ZIP_STORED)
    # flip a byte inside zz's stored data: its CRC check fails when read
    i = good.index(b"zz_v3.json") + 100  # inside the stored data of the local entry
    corrupt = good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1:]
    files = expand_archives([InputFile("c.zip", corrupt)])
    assert [f.issue is None for f in files] == [True, False]
    assert "cannot be read" in files[1].issue.message and "CRC" in files[1].issue.message

    enc = bytearray(make_zip({"e_v3.json": b"{}"}, zipfile.ZIP_STORED))
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):  # set the encrypted flag in both headers
        at = enc.index(sig) + (6 if sig == b"PK\x03\x04" else 8)
        enc[at] |= 1
    [f] = expand_archives([InputFile("e.zip", bytes(enc))])
    assert f.issue.message == "zip member is encrypted; not read"


def test_refused_files_are_reported_by_pairing_and_the_good_pair_is_scored():
    gt = expand_archives([InputFile("gt.zip", make_zip({"EN_001_lantern_keeper_v3.json": GT,
                                                        "ZZ_v3.json": b" " * (3 << 20)}))])
    batch = evaluate_batch(gt, [InputFile("EN_001_lantern_keeper_prediction.json", PRED)])
    assert [d.story_id for d in batch.documents] == ["EN_001_lantern_keeper"] and batch.scored
    refused = [i for i in batch.issues if i.kind == "archive"]
    assert [i.file for i in refused] == ["gt.zip/ZZ_v3.json"]
    assert pair_files(gt, []).unpaired_gt == ["gt.zip/EN_001_lantern_keeper_v3.json"]


def test_collect_paths_caps_file_size_and_does_not_follow_links_out(tmp_path, monkeypatch):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a_v3.json").write_bytes(GT)
    (folder / "big_v3.json").write_bytes(b" " * 8000)
    outside = tmp_path / "secret_v3.json"
    outside.write_text(json.dumps({"secret": 1}))
    (folder / "link_v3.json").symlink_to(outside)
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 6000)  # GT is 5,788 bytes
    files = {f.name: f for f in collect_paths(folder)}
    assert files["a_v3.json"].issue is None and files["a_v3.json"].data == GT
    assert "8,000 bytes, over the 6,000-byte limit" in files["big_v3.json"].issue.message
    assert files["link_v3.json"].data == b"" and "a link out of" in files["link_v3.json"].issue.message
