#!/usr/bin/python3
"""A vLLM-shaped KV-event publisher, for kvprefix's listener tests (needs Debian's python3-zmq and
python3-msgpack).

    vllm_publisher.py SPEC.json TRUTH.txt

Modelled on vLLM's ZmqEventPublisher, vllm-project/vllm vllm/distributed/kv_events.py at commit
0181ea3173e53eea8cf04a86891488e3dc89bb34 ("plain" replay answers), and on the same file in the fork
vMaroon/vllm at 08ee3e54203f7f5a12f85a5976cd371e6be89e11 ("topic" replay answers, vLLM PR #45177; the
24-byte sequence frames of PR #57789). SGLang's epoch topic follows
python/sglang/srt/disaggregation/kv_events.py (_live_topic).

Each engine of the spec gets a PUB-like socket (XPUB, so the script can see when a subscriber has
arrived; on the wire it is a PUB, with vLLM's send high-water mark of 100,000) and, unless its replay
is "none", a ROUTER replay socket with no high-water mark set, so libzmq's default of 1,000 applies
and a long answer loses what passes it, end marker included, as vLLM's does (a spec may set
"replay_hwm"). Both bind 127.0.0.1, on free ports or on the spec's "ports". It simulates an engine's
KV cache (stores of new and continued sequences, removals of any block, now and then a clear, now
and then a multimodal item in extra_keys, CPU-tier stores, plus events a router must ignore:
sliding-window groups), and publishes one batch per step as vLLM does: frames [topic, seq (8 bytes big-endian), msgpack payload], sent live first and
then kept in a replay buffer of "buffer" batches; the payload [ts, [events], dp_rank?] ("array"
encoding, vLLM up to mid-2026) or {"ts", "events", "data_parallel_rank"} with events as maps tagged by
"type" ("map" encoding), or TensorRT-LLM's native publisher's mix ("trtllm" encoding: the positional
batch around map events, some with "locality": "LOCAL"; StreamingKVCacheEventManager's
ZmqEventPublisher in NVIDIA/TensorRT-LLM tensorrt_llm/_torch/pyexecutor/kv_cache_events.py at commit
13599e98c71c6903a2d1a240d23be002c2109821, whose replay answers are the "topic" ones below). A replay request ["", start_seq] (anything but exactly one delimiter and one
sequence frame is ignored, as vLLM does) is answered as vLLM's _service_replay does, in one burst: one
message per buffered batch from start_seq on, then an end marker (sequence of eight 0xff bytes, empty
payload); "plain" answers are ["", seq, payload] and end ["", END, ""]; "topic" answers are
["", topic, seq, payload] and end ["", "", END, ""] (an empty topic frame). At most one request per
engine is served between two live batches, as vLLM's publisher thread does.

Spec (JSON): {"seed": N, "interval": 0.002 (seconds between publishing steps), "engines": [{
    "name": "A", "encoding": "array"|"map"|"trtllm", "replay": "none"|"plain"|"topic", "topic": "",
    "ranks": [0, 1] (dp ranks the batches name, round robin) or null (batches name none),
    "batches": 100, "block_size": 4, "signed": true (hashes >= 2**63 sent as negative int64),
    "drop": [[first, last], ...] (sequence numbers not sent live, but kept for replay),
    "buffer": 10000 (batches kept for replay), "pause_after_drop": false (after the batch that
    follows a dropped range, wait until this engine's replay socket is asked), "early": 0 (batches
    published before the ports are reported, so before anyone can subscribe), "replay_hole_once": false
    (leave one batch out of the first replay answer that has at least three), "replay_delay": 0
    (seconds to wait before answering each replay request; the publisher stalls meanwhile),
    "replay_hwm": null (the ROUTER's SNDHWM; null keeps
    libzmq's default, 1,000), "lie": null | "below" (answer a request from S with the buffered batches
    below S, up to 5, never S or later) | "above" (answer it with the batches from S on, numbered
    10,000 higher), "identity": null | "uuid" (24-byte sequence frames: the number, then a 16-byte id
    fixed for the process, vLLM PR #57789) | "epoch" (the topic gets SGLang's "\0sgl-kv-epoch=" and a
    per-process epoch), "ports": null | {"pub": N, "replay": M} (bind these ports: a restarted engine),
    "bind_late": false (with "ports": bind the PUB socket only after the early batches, so nobody
    receives them live, as when the engine published while its subscriber was away), "clears": true
    (false: no AllBlocksCleared, so the cache only grows, as a benchmark of a full index needs),
    "restart_at": null (before publishing this batch, wait until the subscriber has gone, as a router
    does when it restarts, publish "down_batches" batches with nobody listening, and wait for a
    subscriber again), "snapshot": false (true: a ROUTER snapshot endpoint, vLLM PR #57789 as kvprefix
    reads it provisionally, docs/LISTENER.md section 8; implies "identity": "uuid"), "heartbeat": 0.1
    (with "snapshot": seconds without a batch after which an idle heartbeat is sent), "snapshot_damage":
    null | "truncated" (the answer lacks its END frame) | "count" (it announces one batch more than it
    has) | "undecodable" (its first batch is not msgpack)}]}

A snapshot request ["", "SNAPSHOT"] is answered ["", uuid (16 bytes), resume_seq (8, big-endian: the
last batch published, -1 for none), count (8), batch x count, "END"], the batches compacted from the
same simulated cache the engine publishes from: per dp rank, every block held now and every ancestor
it was stored under, one single-block BlockStored each, parents first, then one BlockRemoved of the
ancestors no longer held (so the index ends with the same chains), plus the CPU-tier stores since the
last clear; at most 64 events a batch. An idle heartbeat is a live message [topic, seq + uuid, ""]
(an empty payload) whose seq is the last batch published (eight 0xff bytes before the first).

Standard error gets a line "REPLAY name start_seq first_answered|-" for every replay request and
"SNAPSHOT name resume_seq batches" for every snapshot answer.

Standard output: "READY {name: {"pub": port, "replay": port|null, "topic": str, "snapshot": port|null}}"
once bound, then
"DONE {name: last_seq}" once every batch is out; it keeps answering replay requests until standard
input closes (or 60 s pass). The truth file lists every batch published, dropped ones included:
    B name seq rank|-
    S parent|- block_size lora|- medium|- group|- kind|- hashes|- tokens|- mm|-  (BlockStored; mm: BLOCK:MM_HASH)
    R medium|- group|- hashes|-                                                   (BlockRemoved)
    C                                                                             (AllBlocksCleared)
and, at the end, queries "Q name rank block_size lora|- depth tokens mm|-" (mm: START:END:MM_HASH,
the multimodal items of the prefix, from the vLLM 0.19+ (identifier, offset) extra_keys): the full token prefix of
blocks held at the end and of blocks stored over the run, and how many leading blocks of it the
engine's simulated cache holds at the end (the match depth of docs/SPEC.md section 4 for that worker).
Hashes are unsigned decimals, lists comma-separated, "-" for none.
"""

import json
import random
import select
import sys
import time
import uuid

import msgpack
import zmq

END_SEQ = b"\xff" * 8
MASK = (1 << 64) - 1


def csv(xs):
    return ",".join(str(x) for x in xs) if xs else "-"


def opt(x):
    return "-" if x is None else str(x)


class Cache:
    """The blocks one dp rank of one engine holds, by engine hash."""

    def __init__(self):
        self.held = {}        # hash -> parent hash or None, for the blocks held now
        self.parent = {}      # hash -> parent hash or None, for every block ever stored
        self.prefix = {}      # hash -> (tokens of the whole prefix, lora), for every block ever stored
        self.block = {}       # hash -> (its own tokens, block_size, lora, its extra_keys entry), ever stored
        self.cpu = []         # CPU-tier stores since the last clear: (hashes, tokens, block_size)

    def clear(self):
        self.held.clear()
        self.cpu.clear()

    def depth(self, h):
        """How many leading blocks of the chain ending at h are held now (docs/SPEC.md section 4's match depth)."""
        chain = []
        while h is not None:
            chain.append(h)
            h = self.parent[h]
        n = 0
        for b in reversed(chain):
            if b not in self.held:
                break
            n += 1
        return n


class Engine:
    def __init__(self, ctx, spec, rng):
        self.spec = spec
        self.name = spec["name"]
        self.rng = rng
        self.encoding = spec.get("encoding", "array")
        self.replay_mode = spec.get("replay", "plain")
        self.topic = spec.get("topic", "").encode()
        self.ranks = spec.get("ranks", [0])
        self.batches = spec.get("batches", 100)
        self.block_size = spec.get("block_size", 4)
        self.signed = spec.get("signed", True)
        self.drops = [tuple(d) for d in spec.get("drop", [])]
        self.buffer_size = spec.get("buffer", 10000)
        self.pause_after_drop = spec.get("pause_after_drop", False)
        self.early = spec.get("early", 0)
        self.hole_once = spec.get("replay_hole_once", False)
        self.restart_at = spec.get("restart_at")
        self.down_batches = spec.get("down_batches", 0)
        self.replay_delay = spec.get("replay_delay", 0)
        self.lie = spec.get("lie")
        self.snapshot = spec.get("snapshot", False)
        self.identity = "uuid" if self.snapshot else spec.get("identity")
        self.heartbeat = spec.get("heartbeat", 0.1)
        self.damage = spec.get("snapshot_damage")
        self.last_sent = time.time()
        self.clears = spec.get("clears", True)
        self.stream_id = uuid.uuid4().bytes if self.identity == "uuid" else b""
        self.live_topic = self.topic
        if self.identity == "epoch":
            self.live_topic = self.topic + b"\x00sgl-kv-epoch=" + uuid.uuid4().hex.encode()
        ports = spec.get("ports") or {}
        self.pub = ctx.socket(zmq.XPUB)
        self.pub.setsockopt(zmq.SNDHWM, 100000)
        self.pub.setsockopt(zmq.RCVHWM, 100000)
        self.pub_port = ports.get("pub")
        self.bind_late = spec.get("bind_late", False) and self.pub_port is not None
        if self.pub_port is None:
            self.pub_port = self.pub.bind_to_random_port("tcp://127.0.0.1")
        elif not self.bind_late:
            bind(self.pub, self.pub_port)
        self.router = None
        self.replay_port = None
        if self.replay_mode != "none":
            self.router = ctx.socket(zmq.ROUTER)
            if spec.get("replay_hwm") is not None:
                self.router.setsockopt(zmq.SNDHWM, spec["replay_hwm"])
            self.replay_port = ports.get("replay")
            if self.replay_port is None:
                self.replay_port = self.router.bind_to_random_port("tcp://127.0.0.1")
            else:
                bind(self.router, self.replay_port)
        self.snap = None
        self.snapshot_port = None
        if self.snapshot:
            self.snap = ctx.socket(zmq.ROUTER)
            self.snapshot_port = ports.get("snapshot")
            if self.snapshot_port is None:
                self.snapshot_port = self.snap.bind_to_random_port("tcp://127.0.0.1")
            else:
                bind(self.snap, self.snapshot_port)
        self.seq = 0
        self.buffer = []
        self.caches = {r: Cache() for r in (self.ranks or [0])}
        self.subscribed = False
        self.replay_requests = 0
        self.truth = []

    # ---------------------------------------------------------------- events

    def wire_hash(self, h):
        return h - (1 << 64) if self.signed and h >= (1 << 63) else h

    def new_hash(self):
        return self.rng.getrandbits(64)

    def tokens(self, n):
        return [self.rng.randrange(0, 50000) for _ in range(n)]

    def make_events(self, cache):
        events = []
        for _ in range(self.rng.randint(1, 3)):
            roll = self.rng.random()
            bs = self.block_size
            if roll < 0.40 or (roll < 0.89 and not cache.held):
                n = self.rng.randint(1, 4)
                lora = "adapter-a" if self.rng.random() < 0.15 else None
                events.append(self.store(cache, None, n, lora))
            elif roll < 0.70:
                parent = self.rng.choice(list(cache.held))
                events.append(self.store(cache, parent, self.rng.randint(1, 3), cache.prefix[parent][1]))
            elif roll < 0.89:
                victims = self.rng.sample(list(cache.held), min(len(cache.held), self.rng.randint(1, 3)))
                if self.rng.random() < 0.2:
                    victims.append(self.new_hash())          # unknown: block_not_found
                for v in victims:
                    cache.held.pop(v, None)
                events.append(("R", victims, None, None))
            elif roll < 0.90 and self.clears:
                cache.clear()
                events.append(("C",))
            elif roll < 0.95:
                # a store on the CPU tier (self-describing, as vLLM's OffloadingConnector sends with
                # self_describing_kv_events): applied to the router's CPU tier
                hashes = [self.new_hash() for _ in range(2)]
                toks = self.tokens(2 * bs)
                cache.cpu.append((hashes, toks, bs))
                events.append(("S", None, hashes, toks, bs, None, "CPU", None, None, None))
            else:
                # a sliding-window group of a hybrid model: store names its kind, remove only its group
                hashes = [self.new_hash() for _ in range(2)]
                events.append(("S", None, hashes, self.tokens(2 * bs), bs, None, None, 1, "sliding_window", None))
                events.append(("R", hashes[:1], None, 1))
        return events

    def store(self, cache, parent, n, lora):
        bs = self.block_size
        hashes = [self.new_hash() for _ in range(n)]
        toks = self.tokens(n * bs)
        prev = parent
        base = cache.prefix[parent][0] if parent is not None else []
        spans = cache.prefix[parent][2] if parent is not None else []
        extra = [None] * n if self.rng.random() < 0.1 else None
        if extra is not None:
            # a multimodal item on the event's first block, as vLLM 0.19+ sends it: (identifier, offset);
            # its mm_hash is the identifier's first 16 hex digits (docs/SPEC.md section 2.1)
            ident = "%064x" % self.rng.getrandbits(256)
            extra[0] = [lora, [ident, 0]] if lora else [[ident, 0]]
            spans = spans + [(len(base), len(base) + bs, int(ident[:16], 16))]
        for i, h in enumerate(hashes):
            cache.held[h] = prev
            cache.parent[h] = prev
            base = base + toks[i * bs:(i + 1) * bs]
            cache.prefix[h] = (base, lora, spans)
            cache.block[h] = (toks[i * bs:(i + 1) * bs], bs, lora, None if extra is None else extra[i])
            prev = h
        medium = "GPU" if self.rng.random() < 0.5 else None
        group = (0, "full_attention") if self.rng.random() < 0.3 else (None, None)
        return ("S", parent, hashes, toks, bs, lora, medium, group[0], group[1], extra)

    def encode_event(self, e):
        if e[0] == "C":
            return ["AllBlocksCleared"] if self.encoding == "array" else {"type": "AllBlocksCleared"}
        local = {"locality": "LOCAL"} if self.encoding == "trtllm" and self.rng.random() < 0.5 else {}
        if e[0] == "R":
            _, hashes, medium, group = e
            wire = [self.wire_hash(h) for h in hashes]
            if self.encoding == "array":
                ev = ["BlockRemoved", wire, medium]
                if group is not None:
                    ev.append(group)
                return ev
            ev = {"type": "BlockRemoved", "block_hashes": wire, "medium": medium}
            if group is not None:
                ev["group_idx"] = group
            ev.update(local)
            return ev
        _, parent, hashes, toks, bs, lora, medium, group, kind, extra = e
        wire = [self.wire_hash(h) for h in hashes]
        wparent = None if parent is None else self.wire_hash(parent)
        lora_id = 1 if lora else None
        if self.encoding == "array":
            ev = ["BlockStored", wire, wparent, toks, bs, lora_id, medium, lora]
            # extra_keys, group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window
            trailing = [extra, group, kind, None]
            if self.rng.random() < 0.1:
                trailing.extend(["a-future-field", 7])      # unknown fields after the known ones
            while trailing and trailing[-1] is None:
                trailing.pop()                      # omit_defaults: trailing defaults are left out
            ev.extend(trailing)
            return ev
        ev = {"type": "BlockStored", "block_hashes": wire, "parent_block_hash": wparent, "token_ids": toks,
              "block_size": bs}
        for key, value in (("lora_id", lora_id), ("medium", medium), ("lora_name", lora), ("extra_keys", extra),
                           ("group_idx", group), ("kv_cache_spec_kind", kind)):
            if value is not None or self.rng.random() < 0.5:
                ev[key] = value
        if self.rng.random() < 0.1:
            ev["a_future_field"] = {"x": [1, 2]}
        ev.update(local)
        return ev

    def payload(self, events, rank):
        wire = [self.encode_event(e) for e in events]
        ts = time.time()
        if self.encoding in ("array", "trtllm"):
            batch = [ts, wire] if rank is None else [ts, wire, rank]
        else:
            batch = {"ts": ts, "events": wire}
            if rank is not None:
                batch["data_parallel_rank"] = rank
        return msgpack.packb(batch, use_bin_type=True)

    def record(self, seq, rank, events):
        self.truth.append("B %s %d %s" % (self.name, seq, opt(rank)))
        for e in events:
            if e[0] == "C":
                self.truth.append("C")
            elif e[0] == "R":
                self.truth.append("R %s %s %s" % (opt(e[2]), opt(e[3]), csv(e[1])))
            else:
                _, parent, hashes, toks, bs, lora, medium, group, kind, extra = e
                mm = []  # block:mm_hash of every multimodal item
                for i, x in enumerate(extra or []):
                    for k in x or []:
                        if isinstance(k, list):
                            mm.append("%d:%d" % (i, int(k[0][:16], 16)))
                self.truth.append("S %s %d %s %s %s %s %s %s %s" % (
                    opt(parent), bs, opt(lora), opt(medium), opt(group), opt(kind), csv(hashes), csv(toks),
                    csv(mm)))

    # ---------------------------------------------------------------- publishing

    def dropped(self, seq):
        return any(a <= seq <= b for a, b in self.drops)

    def publish_next(self):
        seq = self.seq
        rank = None if self.ranks is None else self.ranks[seq % len(self.ranks)]
        cache = self.caches[rank if rank is not None else 0]
        events = self.make_events(cache)
        data = self.payload(events, rank)
        self.record(seq, rank, events)
        self.buffer.append((seq, data))
        if len(self.buffer) > self.buffer_size:
            self.buffer.pop(0)
        if not self.dropped(seq):
            self.pub.send_multipart([self.live_topic, seq.to_bytes(8, "big") + self.stream_id, data])
        self.last_sent = time.time()
        self.seq += 1
        return seq

    def after_drop(self, seq):
        """True if seq is the first batch after a dropped range."""
        return self.dropped(seq - 1) and not self.dropped(seq)

    def serve_replay(self):
        frame = self.router.recv_multipart()
        if len(frame) != 3:
            return                                  # vLLM logs "Invalid replay request" and ignores it
        client, _, start = frame
        if self.replay_delay > 0:
            time.sleep(self.replay_delay)
        self.replay_requests += 1
        start_seq = int.from_bytes(start, "big")
        if self.lie == "below":
            answers = [(s, d) for s, d in self.buffer if start_seq - 5 <= s < start_seq]
        elif self.lie == "above":
            answers = [(s + 10000, d) for s, d in self.buffer if s >= start_seq]
        else:
            answers = [(s, d) for s, d in self.buffer if s >= start_seq]
        print("REPLAY %s %d %s" % (self.name, start_seq, answers[0][0] if answers else "-"), file=sys.stderr,
              flush=True)
        if self.hole_once and len(answers) >= 3:
            self.hole_once = False
            del answers[1]
        # one burst, as vLLM's _service_replay: the ROUTER drops whatever passes its high-water mark
        for s, d in answers:
            if self.replay_mode == "topic":
                self.router.send_multipart([client, b"", self.topic, s.to_bytes(8, "big"), d])
            else:
                self.router.send_multipart([client, b"", s.to_bytes(8, "big"), d])
        if self.replay_mode == "topic":
            self.router.send_multipart([client, b"", b"", END_SEQ, b""])
        else:
            self.router.send_multipart([client, b"", END_SEQ, b""])

    # ---------------------------------------------------------------- snapshots (vLLM PR #57789, provisional)

    def snapshot_events(self, cache):
        """The compacted state of one rank: stores of every held block and its ancestors, parents first,
        a removal of the ancestors no longer held, and the CPU-tier stores."""
        order, needed = [], set()
        for h in cache.held:
            chain = []
            while h is not None and h not in needed:
                chain.append(h)
                needed.add(h)
                h = cache.parent[h]
            order.extend(reversed(chain))
        events = []
        for h in order:
            toks, bs, lora, extra = cache.block[h]
            events.append(("S", cache.parent[h], [h], toks, bs, lora, None, None, None,
                           None if extra is None else [extra]))
        gone = [h for h in order if h not in cache.held]
        if gone:
            events.append(("R", gone, None, None))
        for hashes, toks, bs in cache.cpu:
            events.append(("S", None, hashes, toks, bs, None, "CPU", None, None, None))
        return events

    def serve_snapshot(self):
        frame = self.snap.recv_multipart()
        if len(frame) != 3 or frame[1] != b"" or frame[2] != b"SNAPSHOT":
            return
        client = frame[0]
        batches = []
        for rank, cache in self.caches.items():
            events = self.snapshot_events(cache)
            for i in range(0, len(events), 64):
                batches.append(self.payload(events[i:i + 64], None if self.ranks is None else rank))
        if self.damage == "undecodable" and batches:
            batches[0] = b"\xc1"                   # a byte msgpack never uses
        count = len(batches) + (1 if self.damage == "count" else 0)
        resume = self.seq - 1
        reply = [client, b"", self.stream_id, resume.to_bytes(8, "big", signed=True), count.to_bytes(8, "big")]
        reply += batches
        if self.damage != "truncated":
            reply.append(b"END")
        print("SNAPSHOT %s %d %d" % (self.name, resume, len(batches)), file=sys.stderr, flush=True)
        self.snap.send_multipart(reply)

    def beat(self):
        """An idle heartbeat when nothing was sent for a while: the last number published, no new one taken."""
        if self.snap is not None and time.time() - self.last_sent >= self.heartbeat:
            last = (self.seq - 1).to_bytes(8, "big", signed=True)
            self.pub.send_multipart([self.live_topic, last + self.stream_id, b""])
            self.last_sent = time.time()

    def check_subscription(self):
        while self.pub.poll(0):
            msg = self.pub.recv()
            if msg[:1] == b"\x01":
                self.subscribed = True
            elif msg[:1] == b"\x00":
                self.subscribed = False


def bind(sock, port):
    """Binds a fixed port; a port the previous process of a restarted engine held may need a moment."""
    deadline = time.time() + 10
    while True:
        try:
            sock.bind("tcp://127.0.0.1:%d" % port)
            return
        except zmq.ZMQError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def service(engines, timeout_ms):
    """Answers a pending replay request per engine and notes subscriptions, waiting up to timeout_ms."""
    poller = zmq.Poller()
    for e in engines:
        poller.register(e.pub, zmq.POLLIN)
        if e.router is not None:
            poller.register(e.router, zmq.POLLIN)
        if e.snap is not None:
            poller.register(e.snap, zmq.POLLIN)
    ready = dict(poller.poll(timeout_ms))
    for e in engines:
        if e.pub in ready:
            e.check_subscription()
        if e.router is not None and e.router in ready:
            e.serve_replay()
        if e.snap is not None and e.snap in ready:
            e.serve_snapshot()
        e.beat()
    return bool(ready)


def router_restarts(engines, e):
    """The subscriber goes away, batches are published to nobody, then a subscriber comes back (and,
    if there is a replay socket, the script waits up to 5 s for its request before going on live)."""
    e.restart_at = None
    for want in (False, None, True):
        if want is None:
            for _ in range(e.down_batches):
                e.publish_next()
            asked = e.replay_requests
            continue
        deadline = time.time() + 30
        while e.subscribed != want:
            if time.time() > deadline:
                sys.exit("the subscriber did not %s within 30 s" % ("come back" if want else "leave"))
            service(engines, 10)
    until = time.time() + 5
    while e.router is not None and e.replay_requests == asked and time.time() < until:
        service(engines, 10)


def main():
    spec = json.load(open(sys.argv[1]))
    truth_path = sys.argv[2]
    rng = random.Random(spec.get("seed", 1))
    step = spec.get("interval", 0.002)
    ctx = zmq.Context()
    engines = [Engine(ctx, e, random.Random(rng.getrandbits(64))) for e in spec["engines"]]
    # the early batches go out before the ports are known: no subscriber can have them live (only a
    # subscriber still connecting to fixed ports could, which "bind_late" excludes)
    for e in engines:
        for _ in range(e.early):
            e.publish_next()
        if e.bind_late:
            bind(e.pub, e.pub_port)
    ready = {e.name: {"pub": e.pub_port, "replay": e.replay_port, "topic": e.topic.decode(),
                      "snapshot": e.snapshot_port} for e in engines}
    print("READY " + json.dumps(ready), flush=True)

    deadline = time.time() + 20
    while not all(e.subscribed for e in engines):
        if time.time() > deadline:
            sys.exit("no subscriber arrived within 20 s")
        service(engines, 10)

    while any(e.seq < e.batches for e in engines):
        for e in engines:
            if e.seq >= e.batches:
                continue
            if e.restart_at is not None and e.seq == e.restart_at:
                router_restarts(engines, e)
            seq = e.publish_next()
            if e.pause_after_drop and e.after_drop(seq):
                asked = e.replay_requests
                until = time.time() + 10
                while e.replay_requests == asked and time.time() < until:
                    service(engines, 10)
        service(engines, 0)
        time.sleep(step)

    with open(truth_path, "w") as out:
        out.write("\n".join(line for e in engines for line in e.truth) + "\n")
        for e in engines:
            for rank, cache in e.caches.items():
                # half from the blocks held at the end (mostly positive depths), half from every block
                # ever stored (mostly evicted or cleared: depth 0, or a shorter prefix)
                held = list(cache.held)
                blocks = list(cache.prefix)
                picks = e.rng.sample(held, min(len(held), 30)) + e.rng.sample(blocks, min(len(blocks), 30))
                for h in picks:
                    toks, lora, spans = cache.prefix[h]
                    out.write("Q %s %s %d %s %s %s %s\n" % (e.name, rank, e.block_size, opt(lora), cache.depth(h),
                                                         csv(toks), csv(["%d:%d:%d" % sp for sp in spans])))
    print("DONE " + json.dumps({e.name: e.seq - 1 for e in engines}), flush=True)

    end = time.time() + 60
    while time.time() < end:
        service(engines, 10)
        if select.select([sys.stdin], [], [], 0)[0] and not sys.stdin.readline():
            break
    for e in engines:
        e.pub.close(0)
        if e.router is not None:
            e.router.close(0)
        if e.snap is not None:
            e.snap.close(0)
    ctx.term()


if __name__ == "__main__":
    main()
