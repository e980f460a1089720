"""Input: decoding, readers with located errors, files/folders/zips, GT-prediction pairing; results as typed
JSON (:mod:`evaluators.io.typed_json`, imported on its own)."""

from evaluators.io.decode import DecodedText, decode_bytes
from evaluators.io.errors import InputError, InputIssue, format_json_path
from evaluators.io.readers import Record, RecordSet, load_json_bytes, parse_json_text, read_records
from evaluators.io.sources import InputFile, Pairing, collect_paths, expand_archives, pair_files, story_id

__all__ = [
    "DecodedText", "decode_bytes", "InputError", "InputIssue", "format_json_path", "Record", "RecordSet",
    "load_json_bytes", "parse_json_text", "read_records", "InputFile", "Pairing", "collect_paths",
    "expand_archives", "pair_files", "story_id",
]
