"""A tool's return value as the text the model reads (``format_result``).

Core module: standard library and msgspec only.
"""

from __future__ import annotations

import decimal
import enum
import math
import re
from collections.abc import Callable, Mapping, Sequence, Set, ValuesView
from typing import Any, TypeVar

import msgspec

__all__ = [
    "cut_to_limit", "decode_json", "encode_json", "format_result", "holds_non_finite",
    "json_ready", "lone_surrogate_escapes_replaced", "valid_text",
]

T = TypeVar("T")

# a UTF-16 surrogate half: a str holding one alone cannot be written as UTF-8
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` as UTF-8 can carry it: a surrogate pair joined into its character,
    a lone half (a file name that is not UTF-8, as ``os.listdir`` decodes it) as
    U+FFFD. A model's request, a wire body, an MCP message all refuse lone halves."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


# in a JSON string: an escaped backslash (kept, so that the escape after it is
# read from the right place), or a \u escape of a surrogate half, with its
# low half when one follows
_ESCAPE = re.compile(
    rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    rb"|\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def lone_surrogate_escapes_replaced(data: bytes) -> bytes | None:
    """JSON ``data`` with each lone UTF-16 surrogate half escaped in its strings
    (``\\ud83d`` with no low half after it) as U+FFFD, or None if it has none.

    JavaScript clients write them: Claude Code, cutting a long tool output in
    the middle of an emoji, sends ``\\ud83d`` alone, and a conversation that
    keeps that text could never be sent again. JSON parsers (msgspec, the
    APIs) refuse the escape; the proxy and the chat endpoint decode the body
    again with U+FFFD in the half's place instead, as ``valid_text`` does."""
    if b"\\u" not in data:
        return None
    found = False

    def fix(m: re.Match[bytes]) -> bytes:
        nonlocal found
        whole = m.group(0)
        if whole == b"\\\\" or m.group(1) is not None:  # a backslash, or a whole pair
            return whole
        found = True
        return b"\\ufffd"

    repaired = _ESCAPE.sub(fix, data)
    return repaired if found else None


def decode_json(decode: Callable[[bytes], T], data: bytes) -> T:
    """``decode(data)``, and for JSON that a lone surrogate escape makes it refuse,
    ``decode`` again with U+FFFD in the half's place (``lone_surrogate_escapes_replaced``):
    a saved transcript, a recording line, a chat request. What the second
    ``decode`` raises is raised (the data is broken otherwise too)."""
    try:
        return decode(data)
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError:
        repaired = lone_surrogate_escapes_replaced(data)
        if repaired is None:
            raise
    return decode(repaired)


_plain_encoder = msgspec.json.Encoder()


def encode_json(value: Any) -> bytes:
    """JSON of ``value`` (msgspec's plain encoding); text UTF-8 cannot carry (a lone
    surrogate half) as U+FFFD (``json_ready``), not a ``UnicodeEncodeError``: a
    transcript, a recording line, an event on the wire."""
    try:
        return _plain_encoder.encode(value)
    except UnicodeEncodeError:
        return _plain_encoder.encode(json_ready(value))


def _enc_hook(obj: Any) -> Any:
    """What msgspec cannot encode, as a value it can: a pydantic model's dump; a
    number of a subclass of int or float (msgspec takes only the exact types:
    numpy's ``float64``, a ``UserId(int)``) as that number, not its text; an
    array or a scalar of numpy (and what shares its ``tolist``: ``array.array``,
    tensors) as its values, not its ``str``, which numpy cuts to
    ``[0 1 2 ... 998 999]``; any other mapping as an object and sequence or set
    (``dict.keys()``, a ``deque``) as an array, not their repr
    (``"dict_keys(['a'])"``); anything else as its ``str``."""
    dump = getattr(obj, "model_dump", None)  # pydantic models, without importing pydantic
    if callable(dump):
        try:
            return dump(mode="json")
        except TypeError:
            pass
    if isinstance(obj, float):
        return float(obj)  # NaN and the infinities are then spelled as ``float``'s are
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, str):
        return str(obj)  # a subclass: its text (it is a Sequence too, of characters)
    if isinstance(obj, bytes | bytearray | memoryview):
        return bytes(obj)
    tolist = getattr(obj, "tolist", None)
    if callable(tolist):
        try:
            values = tolist()
        except Exception:
            values = obj
        if values is not obj:
            return values
    if isinstance(obj, Mapping):
        return dict(obj)  # a mappingproxy, a ChainMap, a UserDict: not their repr
    if isinstance(obj, Sequence | Set | ValuesView):
        return list(obj)  # dict.keys(), a deque, a range: their items
    try:
        return str(obj)
    except Exception:  # a broken __str__: repr is the last resort (it may raise too)
        return repr(obj)


_result_encoder = msgspec.json.Encoder(enc_hook=_enc_hook, order="deterministic")


def format_result(value: Any) -> str:
    """A tool's return value as text for the model: a str as is, UTF-8 bytes as text
    (in a dict, list or tuple too: ``_bytes_as_text``),
    anything else as JSON (pydantic-style models via ``model_dump``, numpy's arrays and
    scalars via ``tolist``, subclasses of int and float as numbers; other objects msgspec
    cannot encode fall back to ``str``, then ``repr``: ``_enc_hook``).

    Deterministic JSON (sorted keys and sets, so equal results read the same) needs
    str keys and sortable sets. A value without them (``{2024: 1.5}``, ``{1, "a"}``)
    is first rewritten by ``json_ready``: keys as JSON spells the scalar (``"2024"``,
    ``"true"``, ``"null"``) or ``str(key)``, mixed sets ordered by each item's JSON;
    keys that spell alike all stay, a str key as it is and the others with
    their type named (``{1: "a", "1": "b"}`` is ``{"1":"b","1 (int)":"a"}``).
    Text is made valid by ``valid_text`` (a lone surrogate half becomes U+FFFD),
    as the model's next request must carry it. NaN and the infinities, which
    JSON lacks, are ``NaN``, ``Infinity``, ``-Infinity`` (strings inside JSON),
    not the ``null`` msgspec writes. An int of more digits than Python turns
    into text (4,300 by default, ``sys.get_int_max_str_digits``) is written in
    full, as a JSON number (``_int_text``). Only a value whose ``str`` and
    ``repr`` both raise makes this raise."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, bytes | bytearray):
        try:  # text that arrived as bytes (a subprocess, a file) reads as text
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            pass  # binary: JSON encodes it as base64
    if isinstance(value, float) and not math.isfinite(value):
        return _non_finite_name(value)
    if isinstance(value, dict | list | tuple):
        value = _bytes_as_text(value)
    try:
        data = _result_encoder.encode(value)
    except (TypeError, ValueError):
        # msgspec's complaint about keys, an unsortable set, a lone surrogate
        # (UnicodeEncodeError) or an int over Python's digit limit; rebuilt, then encoded.
        return _result_encoder.encode(_spelled(json_ready(value))).decode()
    if b"null" in data:  # perhaps a NaN or an infinity, which msgspec writes as null
        ready = json_ready(value)
        if holds_non_finite(ready):
            return _result_encoder.encode(_spelled(ready)).decode()
    return data.decode()


def cut_to_limit(text: str, limit: int | None) -> str:
    """``text`` as the model gets it when a limit holds results to ``limit``
    characters: whole when it fits, else its start and its end (three quarters
    and one quarter of ``limit``: a file's head, and the last lines where a
    command prints its summary or its error) around a note that says how much
    was cut and that less can be asked for. One tool's output of megabytes
    would otherwise go into every later request, which the model's context
    cannot hold: each would fail the same way, the chat with it."""
    if limit is None or len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    cut = len(text) - head - tail
    note = (
        f"\n[... {cut:,} characters cut here: the result was {len(text):,} characters, "
        f"more than the {limit:,} passed on. Ask for a smaller part if you need what was cut.]\n"
    )
    return text[:head] + note + (text[-tail:] if tail else "")


def _bytes_as_text(value: Any) -> Any:
    """``value`` with each ``bytes`` in its dicts, lists and tuples that is UTF-8
    text read as that text, as a str result is: a subprocess's output returned as
    ``{"stdout": b"hi\\n", "code": 0}`` was written in base64 (``"aGkK"``), which
    the model cannot read. Binary bytes stay bytes (base64). ``value`` itself
    when there are none; nested deeper than Python recurses, as it is."""
    try:
        return _texts(value)
    except RecursionError:
        return value


# what a walk for bytes need not look into (checked by exact type, the fast test)
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _texts(value: Any) -> Any:
    if isinstance(value, dict):
        changed: dict[Any, Any] | None = None
        for key, item in value.items():
            if type(item) in _SCALARS:
                continue
            new = _texts(item)
            if new is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = new
        return value if changed is None else changed
    if isinstance(value, list | tuple):
        items: list[Any] | None = None
        for i, item in enumerate(value):
            if type(item) in _SCALARS:
                continue
            new = _texts(item)
            if new is not item:
                if items is None:
                    items = list(value)
                items[i] = new
        return value if items is None else items
    if isinstance(value, bytes | bytearray):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


# NaN and the infinities as JavaScript (and Python's ``json``) spell them: JSON
# has no such numbers, and the ``null`` msgspec writes would tell the model nothing.
def _non_finite_name(value: float) -> str:
    """``NaN``, ``Infinity`` or ``-Infinity``, from the value rather than its
    ``repr``: a float subclass (numpy's ``float64``, whose repr is
    ``np.float64(nan)``) is the same number under another spelling."""
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def holds_non_finite(value: Any) -> bool:
    """Whether plain JSON data (``json_ready``'s or ``msgspec.to_builtins``'
    output: dicts, lists, scalars) holds a NaN or an infinity, at any depth."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _spelled(value: Any) -> Any:
    """``json_ready``'s output with each NaN or infinity as its name, a string,
    and each int too long for msgspec (over Python's digit limit) as its digits."""
    if isinstance(value, float):
        return value if math.isfinite(value) else _non_finite_name(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4096:
        return msgspec.Raw(_int_text(value).encode())
    if isinstance(value, dict):
        return {k: _spelled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_spelled(v) for v in value]
    return value


def json_ready(value: Any) -> Any:
    """``value`` as builtins any JSON encoder takes: str keys and text made valid
    UTF-8 (``valid_text``), sets sorted (for the deterministic encoder)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return _keyed(value)
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, set | frozenset):
        items = [json_ready(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=_result_encoder.encode)
    if isinstance(value, int | float | bool | bytes | bytearray) or value is None:
        return value
    try:  # Structs, dataclasses, datetimes…: to builtins, keys as str, then walked again
        # keys as they are (not ``str_keys``, which merges ``1`` and ``"1"``): ``_keyed``
        return json_ready(msgspec.to_builtins(value, enc_hook=_enc_hook))
    except (TypeError, ValueError):
        # walked too: the hook gives a deque's items, a mapping's dict, as they are
        plain = _enc_hook(value)
        return plain if isinstance(plain, str) else json_ready(plain)


def _keyed(value: dict[Any, Any]) -> dict[str, Any]:
    """A dict with each key as ``_key`` spells it, none lost: keys that spell
    alike (``1`` and ``"1"``, ``None`` and ``"null"``, two enums of value 1)
    were merged into one, and the model read one value where the tool returned
    two. A str key keeps its text; a key of another type whose spelling is
    taken has its type named after it (``"1 (int)"``), and a number after that
    should that be taken too. The order is the dict's."""
    names: list[str | None] = []
    taken: set[str] = set()
    for k in value:  # str keys first: their text is theirs
        name = _key(k) if isinstance(k, str) else None
        if name is not None and name in taken:
            name = None
        if name is not None:
            taken.add(name)
        names.append(name)
    out: dict[str, Any] = {}
    for (k, v), name in zip(value.items(), names, strict=True):
        if name is None:
            name = _key(k)
            if name in taken:
                name = base = f"{name} ({type(k).__name__})"
                n = 2
                while name in taken:
                    name, n = f"{base} {n}", n + 1
            taken.add(name)
        out[name] = json_ready(v)
    return out


def _key(key: Any) -> str:
    """A dict key as a JSON object's key: an enum member as its value (as msgspec
    writes the member itself), a number of any subclass (numpy's) as its digits,
    NaN and the infinities by name, as they are written as values."""
    if isinstance(key, enum.Enum):
        return _key(key.value)
    if isinstance(key, str):
        return valid_text(key)
    if isinstance(key, int) and not isinstance(key, bool):
        return _int_text(key)
    if isinstance(key, float):
        key = float(key)
        return msgspec.json.encode(key).decode() if math.isfinite(key) else _non_finite_name(key)
    if key is None or isinstance(key, bool):
        return msgspec.json.encode(key).decode()
    return valid_text(str(key))


# ints of at most this many bits (617 decimal digits) are made Decimals at once
_DIRECT_BITS = 2048


def _int_text(n: int) -> str:
    """``n`` in decimal digits, however many: ``str(n)`` refuses an int of more
    than 4,300 digits (``sys.set_int_max_str_digits``), whose conversion costs
    time quadratic in its length. Such an int is converted here, through
    ``decimal`` (whose multiplication is fast for long numbers), by halves:
    ``n = hi * 2**k + lo``, each half converted alike, which takes well under a
    second for a million digits. The process-wide limit is left as it is (a
    worker thread may be converting text it does not trust)."""
    n = int(n)  # an IntEnum's digits, not its name
    try:
        return str(n)
    except ValueError:
        pass
    with decimal.localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = decimal.MAX_PREC, decimal.MAX_EMAX, decimal.MIN_EMIN
        ctx.traps[decimal.Inexact] = True  # every step is exact, or this raises
        powers: dict[int, decimal.Decimal] = {}

        def convert(m: int, bits: int) -> decimal.Decimal:
            if bits <= _DIRECT_BITS:
                return decimal.Decimal(m)
            half = bits >> 1
            hi = m >> half
            if half not in powers:
                powers[half] = decimal.Decimal(2) ** half
            return convert(hi, bits - half) * powers[half] + convert(m - (hi << half), half)

        magnitude = abs(n)
        digits = str(convert(magnitude, magnitude.bit_length()))
    return digits if n >= 0 else "-" + digits
