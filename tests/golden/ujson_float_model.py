#!/usr/bin/env python3
"""Model of how float stats are mangled in py-data-juicer 1.6.1 (with datasets 5.2.0, pandas 3.1.1).

The `__dj__stats__` column (and `meta`, when its keys vary between rows) is an HF `Json` feature.
HF stores Json values with pandas' ujson: `ujson_dumps` (double_precision=10) on write and
`ujson_loads` (precise_float=False) on read. Filters compare thresholds against the value AFTER this
round trip, and the exporter then writes it with Python's json.dumps (shortest repr). So:

    exported_value = dec(enc(python_value))        # e.g. 0.3 -> "0.3" -> 0.30000000000000004

`enc` is exact for 1e-15 <= |v| < 1e16-1 and v == 0 (all ratio stats); ints are untouched.
Self-test against pandas:  ~/.cache/dj-reference/venv-1.6.1/bin/python tests/golden/ujson_float_model.py
"""


def enc(v: float) -> str:
    """pandas ujson double -> text with double_precision=10 (modp_dtoa2 style, f64 arithmetic)."""
    neg = v < 0
    if neg:
        v = -v
    pow10 = 1e10
    whole = int(v)                 # truncate
    tmp = (v - whole) * pow10      # f64 multiply
    frac = int(tmp)                # truncate
    diff = tmp - frac
    if diff > 0.5 or (diff == 0.5 and (frac & 1)):   # round half to even on the f64 diff
        frac += 1
        if frac >= pow10:
            frac = 0
            whole += 1
    s = f"{whole}.0" if frac == 0 else f"{whole}." + f"{frac:010d}".rstrip("0")
    return ("-" if neg else "") + s


_POW10_NEG = [1.0, 0.1, 0.01, 0.001, 0.0001, 0.00001, 0.000001, 0.0000001, 0.00000001, 0.000000001,
              0.0000000001, 0.00000000001, 0.000000000001, 0.0000000000001, 0.00000000000001,
              0.000000000000001]


def dec(s: str) -> float:
    """pandas ujson text -> double without precise_float: int_part + frac_digits * 10^-n (f64)."""
    sign = -1.0 if s.startswith("-") else 1.0
    ip, fp = s.lstrip("-").split(".")
    fp = fp[:15]                   # at most 15 fraction digits are used
    frc = 0.0
    for ch in fp:
        frc = frc * 10.0 + float(ord(ch) - 48)
    return (float(int(ip)) + frc * _POW10_NEG[len(fp)]) * sign


def roundtrip(v):
    return dec(enc(v)) if isinstance(v, float) else v


if __name__ == "__main__":
    import random

    from pandas.io.json import ujson_dumps, ujson_loads

    rng = random.Random(1)
    vals = [k / n for n in range(1, 400) for k in range(n + 1)] + [rng.random() for _ in range(200000)]
    bad = [v for v in vals if ujson_dumps(v) != enc(v) or ujson_loads(ujson_dumps(v)) != roundtrip(v)]
    print(f"{len(vals)} values checked, {len(bad)} mismatches")
    for v in (0.05, 0.3, 0.7, 0.95, 1 / 3, 41 / 241):
        print(repr(v), "->", enc(v), "->", repr(roundtrip(v)))
