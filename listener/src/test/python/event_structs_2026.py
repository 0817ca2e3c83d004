#!/usr/bin/python3
"""Writes one KV-event batch payload (msgpack) to stdout, laid out as the engines' 2026 structs encode.

Usage: event_structs_2026.py CASE

The engines encode with msgspec: a struct with tag=True becomes a map whose first key is "type"
(the class name), then its fields in declaration order, and omit_defaults=True leaves out every
field still at its default. This script writes those maps with Debian's python3-msgpack, field by
field as declared in:

- vLLM vllm/distributed/kv_events.py @ 0181ea3173e53eea8cf04a86891488e3dc89bb34 (BlockStored,
  BlockRemoved, EventBatch{ts, events, data_parallel_rank}), plus the fields vLLM's event-schema test
  adds: `locality` on BlockStored and BlockRemoved (after kv_cache_spec_sliding_window / group_idx)
  and `remaining_copy_counts` on BlockRemoved (PR #48933, unmerged);
- TensorRT-LLM tensorrt_llm/_torch/pyexecutor/kv_cache_events.py @
  13599e98c71c6903a2d1a240d23be002c2109821 (EventBatch array_like: [ts, events, data_parallel_rank];
  BlockStored with locality and mm_keys: list[list[MultimodalKey]], MultimodalKey tagged "mm_key"
  {hash, start_offset, uuid?});
- SGLang #37482's map events (`cache_salt` a BlockStored field, `session_id` beside it).
"""
import sys

import msgpack


def struct(tag, declared, **values):
    """A msgspec tagged struct: "type" first, then declared fields, defaults (None here) omitted
    unless the field is required (listed with required=True)."""
    out = {"type": tag}
    for name, required in declared:
        if name in values and (required or values[name] is not None):
            out[name] = values[name]
        elif required:
            out[name] = None
    return out


VLLM_STORED = [("block_hashes", True), ("parent_block_hash", True), ("token_ids", True),
               ("block_size", True), ("lora_id", True), ("medium", True), ("lora_name", True),
               ("extra_keys", False), ("group_idx", False), ("kv_cache_spec_kind", False),
               ("kv_cache_spec_sliding_window", False), ("locality", False)]
VLLM_REMOVED = [("block_hashes", True), ("medium", True), ("group_idx", False),
                ("locality", False), ("remaining_copy_counts", False)]
SGLANG_STORED = [("block_hashes", True), ("parent_block_hash", True), ("token_ids", True),
                 ("block_size", True), ("lora_id", True), ("medium", True),
                 ("cache_salt", False), ("session_id", False)]


def batch(events, rank=None):
    out = {"ts": 1767225600.5, "events": events}
    if rank is not None:
        out["data_parallel_rank"] = rank
    return out


def stored(spec, **kw):
    return struct("BlockStored", spec, **kw)


TRTLLM_STORED = VLLM_STORED + [("mm_keys", False)]
MM_KEY = [("hash", True), ("start_offset", True), ("uuid", False)]
IMAGE = "ab" * 32  # a hex digest, as TensorRT-LLM's mm hashes are

CASES = {
    # TensorRT-LLM's positional batch: an image in the second block of two, a plain store, rank 1
    "trtllm_mm": lambda: [1767225600.5, [
        stored(TRTLLM_STORED, block_hashes=[41, 42], token_ids=[1, 2, 3, 4], block_size=2, medium="GPU",
               locality="LOCAL",
               mm_keys=[[], [struct("mm_key", MM_KEY, hash=IMAGE, start_offset=0, uuid="img-1")]]),
        stored(TRTLLM_STORED, block_hashes=[51, 52], token_ids=[1, 2, 3, 4], block_size=2, medium="GPU"),
        stored(TRTLLM_STORED, block_hashes=[61], token_ids=[1, 2], block_size=2, medium="GPU",
               mm_keys=[[{"type": "mm_key", "hash": 7}]]),
    ], 1],

    # two blocks stored, then both removed once: a copy of the first is left, the second's last went
    "vllm_copies": lambda: batch([
        stored(VLLM_STORED, block_hashes=[11, 12], token_ids=[1, 2, 3, 4], block_size=2,
               medium="GPU", locality="LOCAL"),
        struct("BlockRemoved", VLLM_REMOVED, block_hashes=[11, 12], medium="GPU",
               locality="REMOTE", remaining_copy_counts=[1, 0]),
    ]),
    # counts that do not line up, counts of the wrong type, then a good removal
    "vllm_bad_copies": lambda: batch([
        struct("BlockRemoved", VLLM_REMOVED, block_hashes=[11, 12], medium="GPU",
               remaining_copy_counts=[0]),
        struct("BlockRemoved", VLLM_REMOVED, block_hashes=[11], medium="GPU",
               remaining_copy_counts=["one", 0]),
        struct("BlockRemoved", VLLM_REMOVED, block_hashes=[12], medium="GPU", locality=7),
        struct("BlockRemoved", VLLM_REMOVED, block_hashes=[13], medium="GPU"),
    ], rank=0),
    # SGLang: a salted store of one session, the same tokens unsalted in another
    "sglang_session": lambda: batch([
        stored(SGLANG_STORED, block_hashes=[21, 22], token_ids=[1, 2, 3, 4], block_size=2,
               medium="GPU", cache_salt="tenant-a", session_id="chat-1"),
        stored(SGLANG_STORED, block_hashes=[31, 32], token_ids=[1, 2, 3, 4], block_size=2,
               medium="GPU", session_id="chat-2"),
    ]),
}

if __name__ == "__main__":
    sys.stdout.buffer.write(msgpack.packb(CASES[sys.argv[1]](), use_bin_type=True))
