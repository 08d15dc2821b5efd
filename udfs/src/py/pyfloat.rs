//! Python float behaviour that Data-Juicer's results depend on.
//!
//! [`ujson_roundtrip`]: Data-Juicer 1.6.1 keeps `__dj__stats__` in a Hugging Face `Json` column,
//! which pandas' ujson writes with 10 decimals and reads back with an imprecise parser; filters
//! compare, and exports show, the value after that round trip (0.3 becomes 0.30000000000000004).
//! [`repr`] formats a float as Python's `repr`/`json.dumps` does.

/// pandas ujson `double_precision=10` encoding of a finite `v` (modp_dtoa2 arithmetic).
fn ujson_encode(v: f64) -> (bool, u64, u64, usize) {
    let neg = v < 0.0;
    let v = v.abs();
    let pow10 = 1e10;
    let mut whole = v.trunc() as u64;
    let tmp = (v - whole as f64) * pow10;
    let mut frac = tmp.trunc() as u64;
    let diff = tmp - frac as f64;
    if diff > 0.5 || (diff == 0.5 && frac & 1 == 1) {
        frac += 1;
        if frac as f64 >= pow10 {
            frac = 0;
            whole += 1;
        }
    }
    // Fraction digits without trailing zeros.
    let (mut frac_digits, mut width) = (frac, 10usize);
    if frac_digits == 0 {
        width = 0;
    } else {
        while frac_digits % 10 == 0 {
            frac_digits /= 10;
            width -= 1;
        }
    }
    (neg, whole, frac_digits, width)
}

/// The value a float stat has after Data-Juicer's ujson round trip (see the module docs).
/// Exact for `1e-15 <= |v| < 1e16 - 1` and `0`, which covers every ratio stat; other values
/// (and NaN/inf) are returned unchanged.
pub fn ujson_roundtrip(v: f64) -> f64 {
    if !v.is_finite() || v.abs() >= 1e16 - 1.0 {
        return v;
    }
    let (neg, whole, frac, width) = ujson_encode(v);
    let frac_value = if width == 0 {
        0.0
    } else {
        // ujson parses the fraction digits as a float and scales by a table of 10^-n.
        let digits = format!("{frac:0width$}");
        let mut f = 0.0f64;
        for c in digits.bytes().take(15) {
            f = f * 10.0 + f64::from(c - b'0');
        }
        f * POW10_NEG[digits.len().min(15)]
    };
    let r = whole as f64 + frac_value;
    if neg { -r } else { r }
}

/// The value a float has after pandas' ujson writes it (10 decimals) and a precise parser
/// reads it back: what Hugging Face's JSON loader gives for every float of a file once it
/// re-encodes the rows (when some field is kept as generic JSON). Same range as
/// [`ujson_roundtrip`]; other values are returned unchanged.
pub fn ujson_reencode(v: f64) -> f64 {
    if !v.is_finite() || v.abs() >= 1e16 - 1.0 {
        return v;
    }
    let (neg, whole, frac, width) = ujson_encode(v);
    let text = if width == 0 {
        format!("{whole}")
    } else {
        format!("{whole}.{frac:0width$}")
    };
    let r: f64 = text.parse().expect("digits");
    if neg { -r } else { r }
}

#[allow(clippy::excessive_precision)]
const POW10_NEG: [f64; 16] = [
    1.0,
    0.1,
    0.01,
    0.001,
    0.0001,
    0.00001,
    0.000001,
    0.0000001,
    0.00000001,
    0.000000001,
    0.0000000001,
    0.00000000001,
    0.000000000001,
    0.0000000000001,
    0.00000000000001,
    0.000000000000001,
];

/// Python `repr(float)`: shortest round-trip digits, fixed notation for exponents in
/// `[-4, 16)`, else `d.ddde+XX`; `NaN`, `Infinity`, `-Infinity` as `json.dumps` writes them.
pub fn repr(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.2345e-7".
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(24);
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        } else {
            let point = exp as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', point - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_matches_pandas_ujson() {
        // Values printed by tests/golden/ujson_float_model.py against pandas 3.1.1.
        assert_eq!(ujson_roundtrip(0.3), 0.30000000000000004);
        assert_eq!(ujson_roundtrip(0.05), 0.05);
        assert_eq!(ujson_roundtrip(0.7), 0.7000000000000001);
        assert_eq!(ujson_roundtrip(0.0), 0.0);
        assert_eq!(ujson_roundtrip(1.0), 1.0);
        assert_eq!(ujson_roundtrip(41.0 / 241.0), 0.17012448130000002);
        // A precise parse of the same 10 decimals.
        assert_eq!(ujson_reencode(1.0 / 3.0), 0.3333333333);
        assert_eq!(ujson_reencode(0.7), 0.7);
        assert_eq!(ujson_reencode(-2.5), -2.5);
        assert_eq!(ujson_reencode(1e-7), 1e-7);
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(repr(0.5), "0.5");
        assert_eq!(repr(1.0), "1.0");
        assert_eq!(repr(0.30000000000000004), "0.30000000000000004");
        assert_eq!(repr(1e-5), "1e-05");
        assert_eq!(repr(0.0001), "0.0001");
        assert_eq!(repr(1.5e16), "1.5e+16");
        assert_eq!(repr(123456789012345.6), "123456789012345.6");
        assert_eq!(repr(-2.5), "-2.5");
        assert_eq!(repr(f64::NAN), "NaN");
    }
}
