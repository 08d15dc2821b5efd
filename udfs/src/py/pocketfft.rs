//! The unnormalized type-II DCT as `scipy.fftpack.dct` computes it (pocketfft's `T_dcst23` over
//! its real backward FFT `rfftp`), operation for operation, so the coefficients are the same
//! doubles: `image_deduplicator`'s perceptual hash compares them with their median, and flat
//! images put many of them within rounding of it.
//!
//! Only lengths whose factors are 4 and 2 are ported (the hash uses 32); other lengths would
//! need pocketfft's radix-3, -5 and generic passes.

/// pocketfft's `sincos_2pibyn`: `e^(2 pi i k / n)` for `k` in `0..n`, computed from two short
/// tables as pocketfft computes them.
struct SinCos2PiByN {
    n: usize,
    mask: usize,
    shift: usize,
    v1: Vec<(f64, f64)>,
    v2: Vec<(f64, f64)>,
}

impl SinCos2PiByN {
    fn new(n: usize) -> Self {
        // `Thigh(0.25L*pi/n)`: for a power of two n the long double quotient rounds to this.
        let ang = std::f64::consts::PI * 0.25 / n as f64;
        let nval = (n + 2) / 2;
        let mut shift = 1;
        while (1usize << shift) * (1usize << shift) < nval {
            shift += 1;
        }
        let mask = (1usize << shift) - 1;
        let mut v1 = vec![(1.0, 0.0); mask + 1];
        for (i, v) in v1.iter_mut().enumerate().skip(1) {
            *v = Self::calc(i, n, ang);
        }
        let mut v2 = vec![(1.0, 0.0); nval.div_ceil(mask + 1)];
        for (i, v) in v2.iter_mut().enumerate().skip(1) {
            *v = Self::calc(i * (mask + 1), n, ang);
        }
        SinCos2PiByN {
            n,
            mask,
            shift,
            v1,
            v2,
        }
    }

    fn calc(x: usize, n: usize, ang: f64) -> (f64, f64) {
        let mut x = x << 3;
        let cs = |v: usize| ((v as f64 * ang).cos(), (v as f64 * ang).sin());
        if x < 4 * n {
            if x < 2 * n {
                if x < n {
                    return cs(x);
                }
                let (c, s) = cs(2 * n - x);
                return (s, c);
            }
            x -= 2 * n;
            if x < n {
                let (c, s) = cs(x);
                return (-s, c);
            }
            let (c, s) = cs(2 * n - x);
            return (-c, s);
        }
        x = 8 * n - x;
        if x < 2 * n {
            if x < n {
                let (c, s) = cs(x);
                return (c, -s);
            }
            let (c, s) = cs(2 * n - x);
            return (s, -c);
        }
        x -= 2 * n;
        if x < n {
            let (c, s) = cs(x);
            return (-s, -c);
        }
        let (c, s) = cs(2 * n - x);
        (-c, -s)
    }

    fn get(&self, idx: usize) -> (f64, f64) {
        if 2 * idx <= self.n {
            let (x1, x2) = (self.v1[idx & self.mask], self.v2[idx >> self.shift]);
            return (x1.0 * x2.0 - x1.1 * x2.1, x1.0 * x2.1 + x1.1 * x2.0);
        }
        let idx = self.n - idx;
        let (x1, x2) = (self.v1[idx & self.mask], self.v2[idx >> self.shift]);
        (x1.0 * x2.0 - x1.1 * x2.1, -(x1.0 * x2.1 + x1.1 * x2.0))
    }
}

/// pocketfft's `rfftp` for a length of factors 4 and 2: its factors and twiddles.
struct RealFft {
    length: usize,
    /// (factor, twiddles) in pocketfft's order (a factor 2 first).
    factors: Vec<(usize, Vec<f64>)>,
}

impl RealFft {
    fn new(length: usize) -> Self {
        let mut fct = Vec::new();
        let mut len = length;
        while len.is_multiple_of(4) {
            fct.push(4);
            len >>= 2;
        }
        if len.is_multiple_of(2) {
            len >>= 1;
            fct.push(2);
            let last = fct.len() - 1;
            fct.swap(0, last);
        }
        assert_eq!(len, 1, "only lengths of factors 4 and 2 are ported");
        let twid = SinCos2PiByN::new(length);
        let mut l1 = 1;
        let mut factors = Vec::with_capacity(fct.len());
        for (k, &ip) in fct.iter().enumerate() {
            let ido = length / (l1 * ip);
            let mut tw = vec![0.0; (ip - 1) * (ido - 1)];
            if k < fct.len() - 1 {
                for j in 1..ip {
                    for i in 1..=(ido - 1) / 2 {
                        let (r, im) = twid.get(j * l1 * i);
                        tw[(j - 1) * (ido - 1) + 2 * i - 2] = r;
                        tw[(j - 1) * (ido - 1) + 2 * i - 1] = im;
                    }
                }
            }
            factors.push((ip, tw));
            l1 *= ip;
        }
        RealFft { length, factors }
    }

    /// The backward (halfcomplex to real) transform in place, unnormalized.
    fn backward(&self, c: &mut [f64]) {
        if self.length == 1 {
            return;
        }
        let mut ch = vec![0.0; self.length];
        let (mut p1, mut p2): (&mut [f64], &mut [f64]) = (c, &mut ch);
        let mut swapped = false;
        let mut l1 = 1;
        for (ip, tw) in &self.factors {
            let ido = self.length / (ip * l1);
            match ip {
                4 => radb4(ido, l1, p1, p2, tw),
                2 => radb2(ido, l1, p1, p2, tw),
                _ => unreachable!(),
            }
            std::mem::swap(&mut p1, &mut p2);
            swapped = !swapped;
            l1 *= ip;
        }
        if swapped {
            // The result is in the scratch buffer (`p1`); copy it back.
            p2.copy_from_slice(p1);
        }
    }
}

fn radb2(ido: usize, l1: usize, cc: &[f64], ch: &mut [f64], wa: &[f64]) {
    let cci = |a: usize, b: usize, c: usize| a + ido * (b + 2 * c);
    let chi = |a: usize, b: usize, c: usize| a + ido * (b + l1 * c);
    for k in 0..l1 {
        let (a, b) = (cc[cci(0, 0, k)], cc[cci(ido - 1, 1, k)]);
        ch[chi(0, k, 0)] = a + b;
        ch[chi(0, k, 1)] = a - b;
    }
    if ido & 1 == 0 {
        for k in 0..l1 {
            ch[chi(ido - 1, k, 0)] = 2.0 * cc[cci(ido - 1, 0, k)];
            ch[chi(ido - 1, k, 1)] = -2.0 * cc[cci(0, 1, k)];
        }
    }
    if ido <= 2 {
        return;
    }
    for k in 0..l1 {
        for i in (2..ido).step_by(2) {
            let ic = ido - i;
            let (a, b) = (cc[cci(i - 1, 0, k)], cc[cci(ic - 1, 1, k)]);
            ch[chi(i - 1, k, 0)] = a + b;
            let tr2 = a - b;
            let (a, b) = (cc[cci(i, 0, k)], cc[cci(ic, 1, k)]);
            let ti2 = a + b;
            ch[chi(i, k, 0)] = a - b;
            // MULPM(a, b, c, d, e, f): a = c*e + d*f; b = c*f - d*e
            let (wr, wi) = (wa[i - 2], wa[i - 1]);
            ch[chi(i, k, 1)] = wr * ti2 + wi * tr2;
            ch[chi(i - 1, k, 1)] = wr * tr2 - wi * ti2;
        }
    }
}

fn radb4(ido: usize, l1: usize, cc: &[f64], ch: &mut [f64], wa: &[f64]) {
    const SQRT2: f64 = std::f64::consts::SQRT_2;
    let cci = |a: usize, b: usize, c: usize| a + ido * (b + 4 * c);
    let chi = |a: usize, b: usize, c: usize| a + ido * (b + l1 * c);
    let w = |x: usize, i: usize| wa[i + x * (ido - 1)];
    for k in 0..l1 {
        let (a, b) = (cc[cci(0, 0, k)], cc[cci(ido - 1, 3, k)]);
        let (tr2, tr1) = (a + b, a - b);
        let tr3 = 2.0 * cc[cci(ido - 1, 1, k)];
        let tr4 = 2.0 * cc[cci(0, 2, k)];
        ch[chi(0, k, 0)] = tr2 + tr3;
        ch[chi(0, k, 2)] = tr2 - tr3;
        ch[chi(0, k, 3)] = tr1 + tr4;
        ch[chi(0, k, 1)] = tr1 - tr4;
    }
    if ido & 1 == 0 {
        for k in 0..l1 {
            let (a, b) = (cc[cci(0, 3, k)], cc[cci(0, 1, k)]);
            let (ti1, ti2) = (a + b, a - b);
            let (a, b) = (cc[cci(ido - 1, 0, k)], cc[cci(ido - 1, 2, k)]);
            let (tr2, tr1) = (a + b, a - b);
            ch[chi(ido - 1, k, 0)] = tr2 + tr2;
            ch[chi(ido - 1, k, 1)] = SQRT2 * (tr1 - ti1);
            ch[chi(ido - 1, k, 2)] = ti2 + ti2;
            ch[chi(ido - 1, k, 3)] = -SQRT2 * (tr1 + ti1);
        }
    }
    if ido <= 2 {
        return;
    }
    for k in 0..l1 {
        for i in (2..ido).step_by(2) {
            let ic = ido - i;
            let pm = |a: f64, b: f64| (a + b, a - b);
            let (tr2, tr1) = pm(cc[cci(i - 1, 0, k)], cc[cci(ic - 1, 3, k)]);
            let (ti1, ti2) = pm(cc[cci(i, 0, k)], cc[cci(ic, 3, k)]);
            let (tr4, ti3) = pm(cc[cci(i, 2, k)], cc[cci(ic, 1, k)]);
            let (tr3, ti4) = pm(cc[cci(i - 1, 2, k)], cc[cci(ic - 1, 1, k)]);
            let (c0r, cr3) = pm(tr2, tr3);
            ch[chi(i - 1, k, 0)] = c0r;
            let (c0i, ci3) = pm(ti2, ti3);
            ch[chi(i, k, 0)] = c0i;
            let (cr4, cr2) = pm(tr1, tr4);
            let (ci2, ci4) = pm(ti1, ti4);
            for (x, ci, cr) in [(0, ci2, cr2), (1, ci3, cr3), (2, ci4, cr4)] {
                let (wr, wi) = (w(x, i - 2), w(x, i - 1));
                ch[chi(i, k, x + 1)] = wr * ci + wi * cr;
                ch[chi(i - 1, k, x + 1)] = wr * cr - wi * ci;
            }
        }
    }
}

/// `scipy.fftpack.dct(x, type=2)` of one length-`n` vector, in place (pocketfft's `T_dcst23`).
pub struct Dct2 {
    fft: RealFft,
    twiddle: Vec<f64>,
}

impl Dct2 {
    pub fn new(n: usize) -> Self {
        let tw = SinCos2PiByN::new(4 * n);
        Dct2 {
            fft: RealFft::new(n),
            twiddle: (0..n).map(|i| tw.get(i + 1).0).collect(),
        }
    }

    pub fn apply(&self, c: &mut [f64]) {
        let n = c.len();
        let ns2 = n.div_ceil(2);
        c[0] *= 2.0;
        if n & 1 == 0 {
            c[n - 1] *= 2.0;
        }
        let mut k = 1;
        while k + 1 < n {
            // MPINPLACE(c[k+1], c[k]): t = a; a -= b; b = t + b
            let (a, b) = (c[k + 1], c[k]);
            c[k + 1] = a - b;
            c[k] = a + b;
            k += 2;
        }
        self.fft.backward(c);
        let tw = &self.twiddle;
        let (mut k, mut kc) = (1, n - 1);
        while k < ns2 {
            let t1 = tw[k - 1] * c[kc] + tw[kc - 1] * c[k];
            let t2 = tw[k - 1] * c[k] - tw[kc - 1] * c[kc];
            c[k] = 0.5 * (t1 + t2);
            c[kc] = 0.5 * (t1 - t2);
            k += 1;
            kc -= 1;
        }
        if n & 1 == 0 {
            c[ns2] *= tw[ns2 - 1];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive DCT-II sum, to check the fast one against (to rounding).
    fn naive(x: &[f64]) -> Vec<f64> {
        let n = x.len() as f64;
        (0..x.len())
            .map(|k| {
                2.0 * x
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        v * (std::f64::consts::PI * k as f64 * (2.0 * i as f64 + 1.0) / (2.0 * n))
                            .cos()
                    })
                    .sum::<f64>()
            })
            .collect()
    }

    #[test]
    fn the_fast_dct_is_the_dct() {
        for n in [2, 4, 8, 16, 32, 64] {
            let x: Vec<f64> = (0..n).map(|i| ((i * 37 + 11) % 256) as f64).collect();
            let mut fast = x.clone();
            Dct2::new(n).apply(&mut fast);
            for (a, b) in fast.iter().zip(naive(&x)) {
                assert!((a - b).abs() < 1e-9 * (1.0 + b.abs()), "n={n}: {a} vs {b}");
            }
        }
    }

    /// Python's `float.hex()` text back to the double.
    fn from_py_hex(t: &str) -> f64 {
        let (neg, t) = match t.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, t),
        };
        let t = t.strip_prefix("0x").unwrap();
        let (mant, exp) = t.split_once('p').unwrap();
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let mut v = u64::from_str_radix(int, 16).unwrap() as f64;
        for (i, d) in frac.chars().enumerate() {
            v += d.to_digit(16).unwrap() as f64 / 16f64.powi(i as i32 + 1);
        }
        let v = v * 2f64.powi(exp.parse().unwrap());
        if neg { -v } else { v }
    }

    /// scipy.fftpack.dct's outputs, bit for bit (testdata/make_dct32.py wrote them).
    #[test]
    fn coefficients_are_scipys_to_the_bit() {
        let text = include_str!("../../testdata/dct32.txt");
        let mut lines = text.lines();
        let dct = Dct2::new(32);
        let mut checked = 0;
        while let (Some(input), Some(want)) = (lines.next(), lines.next()) {
            let want: Vec<f64> = want[4..].split(' ').map(from_py_hex).collect();
            let got: Vec<f64> = if let Some(v) = input.strip_prefix("vec ") {
                let mut v: Vec<f64> = v.split(' ').map(from_py_hex).collect();
                dct.apply(&mut v);
                v
            } else {
                let img: Vec<f64> = input[4..].split(' ').map(|p| p.parse().unwrap()).collect();
                dct_2d(&dct, &img)
            };
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g.to_bits(),
                    w.to_bits(),
                    "case {checked}, value {i}: {g} vs {w}"
                );
            }
            checked += 1;
        }
        assert_eq!(checked, 11);
    }

    fn dct_2d(dct: &Dct2, img: &[f64]) -> Vec<f64> {
        let mut a = img.to_vec();
        let mut col = [0.0; 32];
        for x in 0..32 {
            for y in 0..32 {
                col[y] = a[y * 32 + x];
            }
            dct.apply(&mut col);
            for y in 0..32 {
                a[y * 32 + x] = col[y];
            }
        }
        for row in a.chunks_mut(32) {
            dct.apply(row);
        }
        a
    }
}
