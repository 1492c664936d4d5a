"""An int8 embedding table looked up before it is scaled, not after: ~35 MB less RSS.

    >>> data = gather_first(Path("model.onnx").read_bytes())   # doctest: +SKIP
    >>> data is None            # a graph without the pattern: load the file as it is

The int8 MiniLM stores each weight as ``Mul(Cast(W_q), scale)``; onnxruntime
folds these at load into float32 initializers, so its 30522 x 384 word table
became 47 MB of float32 (the int8 table is 12 MB) and the folding passed 90 MB
more through the heap (a session peaked at 275 MB RSS, against 184 MB so). Only
the rows of a text's tokens are ever read, so the graph is rewritten to gather
first, ``Mul(Cast(Gather(W_q, ids)), Gather(scale, ids))``: the same float32
products of the same two numbers, so the same vectors bit for bit
(tests/test_embedder_int8.py). The other weights stay folded: scaling them per
run would make a question ~3x slower.

onnx itself is no dependency: the rewrite edits the protobuf encoding directly
(ModelProto.graph is field 7, GraphProto.node field 1; NodeProto input 1,
output 2, op_type 4, attribute 5), copying every other byte as it was.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["gather_first"]

_LEN = 2  # the wire type of strings, bytes and messages
_MODEL_GRAPH, _GRAPH_NODE, _GRAPH_INIT = 7, 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTR = 1, 2, 3, 4, 5
_TENSOR_NAME = 8


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, pos
        shift += 7


def _fields(buf: memoryview) -> Iterator[tuple[int, int, int, int, int]]:
    """(field, wire type, start of its key, start of its value, end) of each field;
    a length-delimited value starts past its length."""
    pos, end = 0, len(buf)
    while pos < end:
        head = pos
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, stop = _varint(buf, pos)
        elif wire == 1:
            stop = pos + 8
        elif wire == _LEN:
            n, pos = _varint(buf, pos)
            stop = pos + n
        elif wire == 5:
            stop = pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield field, wire, head, pos, stop
        pos = stop


def _enc_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _enc(field: int, value: bytes) -> bytes:
    return _enc_varint(field << 3 | _LEN) + _enc_varint(len(value)) + value


class _Node:
    def __init__(self, raw: memoryview) -> None:
        self.raw = raw
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.op = ""
        self.attrs: list[bytes] = []
        for field, wire, _, start, stop in _fields(raw):
            if wire != _LEN:
                continue
            if field == _NODE_INPUT:
                self.inputs.append(bytes(raw[start:stop]).decode())
            elif field == _NODE_OUTPUT:
                self.outputs.append(bytes(raw[start:stop]).decode())
            elif field == _NODE_OP:
                self.op = bytes(raw[start:stop]).decode()
            elif field == _NODE_ATTR:
                self.attrs.append(bytes(raw[start:stop]))


def _node(op: str, inputs: list[str], outputs: list[str], name: str, attrs: list[bytes]) -> bytes:
    parts = [_enc(_NODE_INPUT, i.encode()) for i in inputs]
    parts += [_enc(_NODE_OUTPUT, o.encode()) for o in outputs]
    parts += [_enc(_NODE_NAME, name.encode()), _enc(_NODE_OP, op.encode())]
    parts += [_enc(_NODE_ATTR, a) for a in attrs]
    return b"".join(parts)


def gather_first(model: bytes) -> bytes | None:
    """The model with every ``Gather(Mul(Cast(W_q), scale), ids)`` of initializers
    rewritten to scale after the gather; None when there is none (or the encoding
    is not what this reads)."""
    buf = memoryview(model)
    graph = [(h, s, e) for f, w, h, s, e in _fields(buf) if f == _MODEL_GRAPH and w == _LEN]
    if len(graph) != 1:
        return None
    head, g0, g1 = graph[0]
    gbuf = buf[g0:g1]
    nodes: list[tuple[int, int, _Node]] = []
    inits: set[str] = set()
    for field, wire, _, start, stop in _fields(gbuf):
        if wire != _LEN:
            continue
        if field == _GRAPH_NODE:
            nodes.append((start, stop, _Node(gbuf[start:stop])))
        elif field == _GRAPH_INIT:
            for f, w, _, s, e in _fields(gbuf[start:stop]):
                if f == _TENSOR_NAME and w == _LEN:
                    inits.add(bytes(gbuf[start + s : start + e]).decode())
    producer = {o: n for _, _, n in nodes for o in n.outputs}
    uses: dict[str, int] = {}
    for _, _, n in nodes:
        for i in n.inputs:
            uses[i] = uses.get(i, 0) + 1
    replace: dict[int, bytes] = {}  # node's start -> its replacement ("" drops it)
    for start, _, n in nodes:
        if n.op != "Gather" or len(n.inputs) != 2 or len(n.outputs) != 1:
            continue
        mul = producer.get(n.inputs[0])
        if mul is None or mul.op != "Mul" or len(mul.inputs) != 2 or uses[n.inputs[0]] != 1:
            continue
        cast = producer.get(mul.inputs[0])
        scale = mul.inputs[1]
        if cast is None or cast.op != "Cast" or len(cast.inputs) != 1 or scale not in inits:
            continue
        quant = cast.inputs[0]
        if quant not in inits or uses[mul.inputs[0]] != 1:
            continue
        table, ids, out = n.inputs[0], n.inputs[1], n.outputs[0]
        rows, row_scale, rows_f = f"{table}/rows_q", f"{table}/rows_scale", f"{table}/rows_f"
        replace[start] = b"".join(
            _enc(_GRAPH_NODE, node)
            for node in (
                _node("Gather", [quant, ids], [rows], f"{table}/gather_q", n.attrs),
                _node("Gather", [scale, ids], [row_scale], f"{table}/gather_scale", n.attrs),
                _node("Cast", [rows], [rows_f], f"{table}/cast", cast.attrs),
                _node("Mul", [rows_f, row_scale], [out], f"{table}/scale", []),
            )
        )
        for dropped in (mul, cast):
            at = next(s for s, _, m in nodes if m is dropped)
            replace[at] = b""
    if not replace:
        return None
    # views, not copies, until the one join (the initializers are 22 MB)
    parts: list[bytes | memoryview] = []
    pos = 0
    for field, wire, at, start, stop in _fields(gbuf):
        if field == _GRAPH_NODE and wire == _LEN and start in replace:
            parts += [gbuf[pos:at], replace[start]]
            pos = stop
    parts.append(gbuf[pos:])
    size = sum(len(p) for p in parts)
    key = _enc_varint(_MODEL_GRAPH << 3 | _LEN) + _enc_varint(size)
    return b"".join([buf[:head], key, *parts, buf[g1:]])
