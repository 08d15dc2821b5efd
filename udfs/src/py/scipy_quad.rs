//! `scipy.integrate.quad` for finite intervals: a port of QUADPACK's QAGS (`dqagse` with the
//! 21-point Gauss-Kronrod rule and the epsilon algorithm) that gives SciPy's results bit for bit,
//! as Data-Juicer's MinHash band parameters depend on them.

const EPMACH: f64 = f64::EPSILON;
const UFLOW: f64 = f64::MIN_POSITIVE;
const OFLOW: f64 = f64::MAX;

/// `scipy.integrate.quad`'s defaults.
pub(crate) const QUAD_EPSABS: f64 = 1.49e-8;
pub(crate) const QUAD_EPSREL: f64 = 1.49e-8;
pub(crate) const QUAD_LIMIT: usize = 50;

/// The 21-point Gauss-Kronrod rule on `[a, b]` (QUADPACK `dqk21`): `(result, abserr, resabs,
/// resasc)`. The constants are QUADPACK's 33-digit literals, kept verbatim (they round to the
/// same f64s SciPy compiles); loops and comparisons mirror the C code, here and in the other
/// QUADPACK ports, so that every operation happens in the same order.
#[allow(clippy::excessive_precision, clippy::needless_range_loop)]
fn dqk21(f: &impl Fn(f64) -> f64, a: f64, b: f64) -> (f64, f64, f64, f64) {
    const WG: [f64; 5] = [
        0.066671344308688137593568809893332,
        0.149451349150580593145776339657697,
        0.219086362515982043995534934228163,
        0.269266719309996355091226921569469,
        0.295524224714752870173892994651338,
    ];
    const XGK: [f64; 11] = [
        0.995657163025808080735527280689003,
        0.973906528517171720077964012084452,
        0.930157491355708226001207180059508,
        0.865063366688984510732096688423493,
        0.780817726586416897063717578345042,
        0.679409568299024406234327365114874,
        0.562757134668604683339000099272694,
        0.433395394129247190799265943165784,
        0.294392862701460198131126603103866,
        0.148874338981631210884826001129720,
        0.000000000000000000000000000000000,
    ];
    const WGK: [f64; 11] = [
        0.011694638867371874278064396062192,
        0.032558162307964727478818972459390,
        0.054755896574351996031381300244580,
        0.075039674810919952767043140916190,
        0.093125454583697605535065465083366,
        0.109387158802297641899210590325805,
        0.123491976262065851077958109831074,
        0.134709217311473325928054001771707,
        0.142775938577060080797094273138717,
        0.147739104901338491374841515972068,
        0.149445554002916905664936468389821,
    ];
    let centr = 0.5 * (a + b);
    let hlgth = 0.5 * (b - a);
    let dhlgth = hlgth.abs();
    let mut fv1 = [0.0f64; 10];
    let mut fv2 = [0.0f64; 10];

    let fc = f(centr);
    let mut resg = 0.0;
    let mut resk = WGK[10] * fc;
    let mut resabs = resk.abs();
    for j in 0..5 {
        let jtw = 2 * j + 1;
        let absc = hlgth * XGK[jtw];
        let fval1 = f(centr - absc);
        let fval2 = f(centr + absc);
        fv1[jtw] = fval1;
        fv2[jtw] = fval2;
        let fsum = fval1 + fval2;
        resg += WG[j] * fsum;
        resk += WGK[jtw] * fsum;
        resabs += WGK[jtw] * (fval1.abs() + fval2.abs());
    }
    for j in 0..5 {
        let jtwm1 = 2 * j;
        let absc = hlgth * XGK[jtwm1];
        let fval1 = f(centr - absc);
        let fval2 = f(centr + absc);
        fv1[jtwm1] = fval1;
        fv2[jtwm1] = fval2;
        let fsum = fval1 + fval2;
        resk += WGK[jtwm1] * fsum;
        resabs += WGK[jtwm1] * (fval1.abs() + fval2.abs());
    }
    let reskh = resk * 0.5;
    let mut resasc = WGK[10] * (fc - reskh).abs();
    for j in 0..10 {
        resasc += WGK[j] * ((fv1[j] - reskh).abs() + (fv2[j] - reskh).abs());
    }
    let result = resk * hlgth;
    resabs *= dhlgth;
    resasc *= dhlgth;
    let mut abserr = ((resk - resg) * hlgth).abs();
    if resasc != 0.0 && abserr != 0.0 {
        abserr = resasc * 1.0f64.min((200.0 * abserr / resasc).powf(1.5));
    }
    if resabs > UFLOW / (50.0 * EPMACH) {
        abserr = (EPMACH * 50.0 * resabs).max(abserr);
    }
    (result, abserr, resabs, resasc)
}

/// QUADPACK `dqpsrt`: keeps `iord` pointing at the error estimates in descending order and
/// selects the interval with the `nrmax`-th largest error. `last` is a count (1-based).
fn dqpsrt(
    limit: usize,
    last: usize,
    maxerr: &mut usize,
    ermax: &mut f64,
    elist: &[f64],
    iord: &mut [usize],
    nrmax: &mut usize,
) {
    if last <= 2 {
        iord[0] = 0;
        iord[1] = 1;
        *maxerr = iord[*nrmax];
        *ermax = elist[*maxerr];
        return;
    }
    let errmax = elist[*maxerr];
    while *nrmax > 0 && errmax > elist[iord[*nrmax - 1]] {
        iord[*nrmax] = iord[*nrmax - 1];
        *nrmax -= 1;
    }
    let jupbn = if last > limit / 2 + 2 {
        limit + 2 - last
    } else {
        last - 1
    };
    let errmin = elist[last - 1];
    let jbnd = jupbn - 1;
    let ibeg = *nrmax + 1;
    let mut found = None;
    for i in ibeg..=jbnd {
        if errmax >= elist[iord[i]] {
            found = Some(i);
            break;
        }
        iord[i - 1] = iord[i];
    }
    let Some(i) = found else {
        iord[jbnd] = *maxerr;
        iord[jupbn] = last - 1;
        *maxerr = iord[*nrmax];
        *ermax = elist[*maxerr];
        return;
    };
    // Insert errmin by traversing the list bottom-up.
    iord[i - 1] = *maxerr;
    let mut k = jbnd;
    let mut placed = false;
    for _ in i..=jbnd {
        if errmin < elist[iord[k]] {
            iord[k + 1] = last - 1;
            placed = true;
            break;
        }
        iord[k + 1] = iord[k];
        k -= 1;
    }
    if !placed {
        iord[i] = last - 1;
    }
    *maxerr = iord[*nrmax];
    *ermax = elist[*maxerr];
}

/// QUADPACK `dqelg`: Wynn's epsilon algorithm on `epstab[..=n]`; returns `(result, abserr)`.
#[allow(clippy::neg_cmp_op_on_partial_ord, clippy::explicit_counter_loop)]
fn dqelg(
    n: &mut usize,
    epstab: &mut [f64; 52],
    res3la: &mut [f64; 3],
    nres: &mut usize,
) -> (f64, f64) {
    let starting_n = *n;
    *nres += 1;
    let mut abserr = OFLOW;
    let mut result = epstab[*n];
    if *n < 2 {
        abserr = abserr.max(5.0 * EPMACH * result.abs());
        return (result, abserr);
    }
    const LIMEXP: usize = 49;
    epstab[*n + 2] = epstab[*n];
    let newelm = *n / 2;
    epstab[*n] = OFLOW;
    let mut k1 = *n;
    for i in 0..newelm {
        let k2 = k1 - 1;
        let k3 = k1 - 2;
        let mut res = epstab[k1 + 2];
        let e0 = epstab[k3];
        let e1 = epstab[k2];
        let e2 = res;
        let e1abs = e1.abs();
        let delta2 = e2 - e1;
        let err2 = delta2.abs();
        let tol2 = e2.abs().max(e1abs) * EPMACH;
        let delta3 = e1 - e0;
        let err3 = delta3.abs();
        let tol3 = e1abs.max(e0.abs()) * EPMACH;
        if !(err2 > tol2 || err3 > tol3) {
            // e0, e1 and e2 are equal to within machine accuracy: convergence is assumed.
            result = res;
            abserr = err2 + err3;
            abserr = abserr.max(5.0 * EPMACH * result.abs());
            return (result, abserr);
        }
        let e3 = epstab[k1];
        epstab[k1] = e1;
        let delta1 = e1 - e3;
        let err1 = delta1.abs();
        let tol1 = e1abs.max(e3.abs()) * EPMACH;
        // Two elements very close to each other: omit a part of the table.
        if err1 <= tol1 || err2 <= tol2 || err3 <= tol3 {
            *n = i + i;
            break;
        }
        let ss = 1.0 / delta1 + 1.0 / delta2 - 1.0 / delta3;
        let epsinf = (ss * e1).abs();
        // Irregular behaviour in the table: omit a part of it.
        if !(epsinf > 1e-4) {
            *n = i + i;
            break;
        }
        res = e1 + 1.0 / ss;
        epstab[k1] = res;
        k1 -= 2;
        let error = err2 + (res - e2).abs() + err3;
        if !(error > abserr) {
            abserr = error;
            result = res;
        }
    }
    // Shift the table.
    if *n == LIMEXP {
        *n = 2 * (LIMEXP / 2);
    }
    let n2_rem = starting_n % 2;
    for i in 0..=newelm {
        epstab[2 * i + n2_rem] = epstab[2 * i + 2 + n2_rem];
    }
    if *n != starting_n {
        let mut indx = starting_n - *n;
        for i in 0..=*n {
            epstab[i] = epstab[indx];
            indx += 1;
        }
    }
    if *nres < 4 {
        res3la[*nres - 1] = result;
        abserr = OFLOW;
    } else {
        abserr =
            (result - res3la[2]).abs() + (result - res3la[1]).abs() + (result - res3la[0]).abs();
        res3la[0] = res3la[1];
        res3la[1] = res3la[2];
        res3la[2] = result;
    }
    abserr = abserr.max(5.0 * EPMACH * result.abs());
    (result, abserr)
}

/// `scipy.integrate.quad(f, a, b)` for finite `a <= b`: QUADPACK `dqagse` (adaptive
/// Gauss-Kronrod 21 with Wynn-epsilon extrapolation), epsabs = epsrel = 1.49e-8, limit 50, ported
/// from SciPy's C translation operation for operation so that results agree bit for bit (both
/// call the C library's `pow` in the integrands here). Returns `(result, abserr)`.
pub(crate) fn quad(f: impl Fn(f64) -> f64, a: f64, b: f64) -> (f64, f64) {
    let (r, e, _) = dqagse(&f, a, b, QUAD_EPSABS, QUAD_EPSREL, QUAD_LIMIT);
    (r, e)
}

/// QUADPACK `dqagse`; returns `(result, abserr, ier)`. The C function's state lives in [`Qags`],
/// so that its parts (first approximation, bisection, extrapolation, final result) are functions
/// of their own; each keeps the C code's operations in their order.
fn dqagse(
    f: &impl Fn(f64) -> f64,
    a: f64,
    b: f64,
    epsabs: f64,
    epsrel: f64,
    limit: usize,
) -> (f64, f64, i32) {
    if epsabs <= 0.0 && epsrel < (50.0 * EPMACH).max(0.5e-28) {
        return (0.0, 0.0, 6);
    }

    // First approximation to the integral.
    let (result, abserr, defabs, resabs0) = dqk21(f, a, b);
    let dres = result.abs();
    let errbnd = epsabs.max(epsrel * dres);
    let mut ier = 0i32;
    if abserr <= 100.0 * EPMACH * defabs && abserr > errbnd {
        ier = 2;
    }
    if limit == 1 {
        ier = 1;
    }
    if ier != 0 || (abserr <= errbnd && abserr != resabs0) || abserr == 0.0 {
        return (result, abserr, ier);
    }

    let mut q = Qags::new(f, [a, b, epsabs, epsrel], limit, [result, abserr, defabs]);
    q.errbnd = errbnd;
    let mut last_l = 0usize;
    let mut exit = Exit::Break;
    for l in 1..limit {
        last_l = l;
        if let Some(e) = q.step(l) {
            exit = e;
            break;
        }
    }
    q.finish(exit, last_l)
}

/// How `dqagse`'s main loop ended.
enum Exit {
    /// `goto 115`: sum the interval results.
    Sum,
    /// `break`: the extrapolated result may be used.
    Break,
}

/// `dqagse`'s locals after the first approximation, under their QUADPACK names.
struct Qags<'f, F> {
    f: &'f F,
    a: f64,
    b: f64,
    epsabs: f64,
    epsrel: f64,
    limit: usize,
    alist: Vec<f64>,
    blist: Vec<f64>,
    rlist: Vec<f64>,
    elist: Vec<f64>,
    iord: Vec<usize>,
    rlist2: [f64; 52],
    res3la: [f64; 3],
    ier: i32,
    ierror: i32,
    erlarg: f64,
    correc: f64,
    small: f64,
    ertest: f64,
    result: f64,
    abserr: f64,
    defabs: f64,
    errbnd: f64,
    errmax: f64,
    maxerr: usize,
    area: f64,
    errsum: f64,
    nrmax: usize,
    nres: usize,
    numrl2: usize,
    ktmin: u32,
    extrap: bool,
    noext: bool,
    iroff1: u32,
    iroff2: u32,
    iroff3: u32,
    ksgn: i32,
}

#[allow(clippy::neg_cmp_op_on_partial_ord, clippy::mut_range_bound)]
impl<F: Fn(f64) -> f64> Qags<'_, F> {
    /// The state after the first approximation `[result, abserr, defabs]` over `[a, b]`
    /// (`dqagse`'s initialization).
    fn new(
        f: &F,
        [a, b, epsabs, epsrel]: [f64; 4],
        limit: usize,
        [result, abserr, defabs]: [f64; 3],
    ) -> Qags<'_, F> {
        let mut q = Qags {
            f,
            a,
            b,
            epsabs,
            epsrel,
            limit,
            alist: vec![0.0f64; limit],
            blist: vec![0.0f64; limit],
            rlist: vec![0.0f64; limit],
            elist: vec![0.0f64; limit],
            iord: vec![0usize; limit],
            rlist2: [0.0f64; 52],
            res3la: [0.0f64; 3],
            ier: 0,
            ierror: 0,
            erlarg: 0.0,
            correc: 0.0,
            small: 0.0,
            ertest: 0.0,
            result,
            abserr: OFLOW,
            defabs,
            errbnd: 0.0,
            errmax: abserr,
            maxerr: 0,
            area: result,
            errsum: abserr,
            nrmax: 0,
            nres: 0,
            numrl2: 1,
            ktmin: 0,
            extrap: false,
            noext: false,
            iroff1: 0,
            iroff2: 0,
            iroff3: 0,
            ksgn: if result.abs() >= (1.0 - 50.0 * EPMACH) * defabs {
                1
            } else {
                -1
            },
        };
        q.alist[0] = a;
        q.blist[0] = b;
        q.rlist[0] = result;
        q.elist[0] = abserr;
        q.iord[0] = 0;
        q.rlist2[0] = result;
        q
    }

    /// One pass of the main loop (`l` from 1): bisect, then extrapolate when due. `None`: go on.
    fn step(&mut self, l: usize) -> Option<Exit> {
        let last = l + 1;
        let erlast = self.errmax;
        let (a1, b1, error12) = self.bisect(l);
        if self.errsum <= self.errbnd {
            return Some(Exit::Sum);
        }
        if self.ier != 0 {
            return Some(Exit::Break);
        }
        if l == 1 {
            self.small = (self.b - self.a).abs() * 0.375;
            self.erlarg = self.errsum;
            self.ertest = self.errbnd;
            self.rlist2[1] = self.area;
            return None;
        }
        if self.noext {
            return None;
        }
        self.erlarg -= erlast;
        if (b1 - a1).abs() > self.small {
            self.erlarg += error12;
        }
        self.extrapolate(last)
    }

    /// Bisects the subinterval with the nrmax-th largest error estimate, improves the
    /// approximations to the integral and error, and tests for roundoff. Returns the left half's
    /// bounds and the error of both halves.
    fn bisect(&mut self, l: usize) -> (f64, f64, f64) {
        let last = l + 1;
        let maxerr = self.maxerr;
        let a1 = self.alist[maxerr];
        let b1 = 0.5 * (self.alist[maxerr] + self.blist[maxerr]);
        let a2 = b1;
        let b2 = self.blist[maxerr];
        let (area1, error1, _, defab1) = dqk21(self.f, a1, b1);
        let (area2, error2, _, defab2) = dqk21(self.f, a2, b2);

        // Improve previous approximations to integral and error and test for accuracy.
        let area12 = area1 + area2;
        let error12 = error1 + error2;
        self.errsum = self.errsum + error12 - self.errmax;
        self.area = self.area + area12 - self.rlist[maxerr];
        if defab1 != error1 && defab2 != error2 {
            if !((self.rlist[maxerr] - area12).abs() > 1.0e-5 * area12.abs()
                || error12 < 0.99 * self.errmax)
            {
                if self.extrap {
                    self.iroff2 += 1;
                } else {
                    self.iroff1 += 1;
                }
            }
            if l > 9 && error12 > self.errmax {
                self.iroff3 += 1;
            }
        }
        self.rlist[maxerr] = area1;
        self.rlist[l] = area2;
        self.errbnd = self.epsabs.max(self.epsrel * self.area.abs());

        // Test for roundoff error and eventually set error flag.
        if self.iroff1 + self.iroff2 >= 10 || self.iroff3 >= 20 {
            self.ier = 2;
        }
        if self.iroff2 >= 5 {
            self.ierror = 3;
        }
        // The number of subintervals equals limit.
        if last == self.limit {
            self.ier = 1;
        }
        // Bad integrand behaviour at some points of the integration range.
        if a1.abs().max(b2.abs()) <= (1.0 + 100.0 * EPMACH) * (a2.abs() + 1000.0 * UFLOW) {
            self.ier = 4;
        }

        // Append the newly-created intervals to the list.
        if !(error2 > error1) {
            self.alist[l] = a2;
            self.blist[maxerr] = b1;
            self.blist[l] = b2;
            self.elist[maxerr] = error1;
            self.elist[l] = error2;
        } else {
            self.alist[maxerr] = a2;
            self.alist[l] = a1;
            self.blist[l] = b1;
            self.rlist[maxerr] = area2;
            self.rlist[l] = area1;
            self.elist[maxerr] = error2;
            self.elist[l] = error1;
        }
        dqpsrt(
            self.limit,
            last,
            &mut self.maxerr,
            &mut self.errmax,
            &self.elist,
            &mut self.iord,
            &mut self.nrmax,
        );
        (a1, b1, error12)
    }

    /// The rest of a pass once extrapolation is allowed: bisect a larger interval next, or
    /// extrapolate and prepare the bisection of the smallest one. `None`: go on.
    fn extrapolate(&mut self, last: usize) -> Option<Exit> {
        if !self.extrap {
            // Is the interval to be bisected next the smallest interval?
            if (self.blist[self.maxerr] - self.alist[self.maxerr]).abs() > self.small {
                return None;
            }
            self.extrap = true;
            self.nrmax = 1;
        }
        if self.ierror != 3 && self.erlarg > self.ertest {
            // The smallest interval has the largest error. Before bisecting decrease the sum of
            // the errors over the larger intervals (erlarg) and perform extrapolation.
            let jupbnd = if last > 2 + self.limit / 2 {
                self.limit + 3 - last
            } else {
                last
            };
            for _ in self.nrmax..jupbnd {
                self.maxerr = self.iord[self.nrmax];
                self.errmax = self.elist[self.maxerr];
                if (self.blist[self.maxerr] - self.alist[self.maxerr]).abs() > self.small {
                    return None;
                }
                self.nrmax += 1;
            }
        }
        // Perform extrapolation.
        self.numrl2 += 1;
        self.rlist2[self.numrl2] = self.area;
        let (reseps, abseps) = dqelg(
            &mut self.numrl2,
            &mut self.rlist2,
            &mut self.res3la,
            &mut self.nres,
        );
        self.ktmin += 1;
        if self.ktmin > 5 && self.abserr < 1.0e-3 * self.errsum {
            self.ier = 5;
        }
        if abseps < self.abserr {
            self.ktmin = 0;
            self.abserr = abseps;
            self.result = reseps;
            self.correc = self.erlarg;
            self.ertest = self.epsabs.max(self.epsrel * reseps.abs());
            if self.abserr <= self.ertest {
                return Some(Exit::Break);
            }
        }
        // Prepare bisection of the smallest interval.
        if self.numrl2 == 0 {
            self.noext = true;
        }
        if self.ier == 5 {
            return Some(Exit::Break);
        }
        self.maxerr = self.iord[0];
        self.errmax = self.elist[self.maxerr];
        self.nrmax = 0;
        self.extrap = false;
        self.small *= 0.5;
        self.erlarg = self.errsum;
        None
    }

    /// Sets the final result and error estimate (the C code's labels 105 to 130), after the
    /// main loop ended with `exit` in pass `last_l`.
    fn finish(mut self, exit: Exit, last_l: usize) -> (f64, f64, i32) {
        #[derive(PartialEq)]
        enum Step {
            L105,
            L110,
            L115,
            L130,
        }
        let mut step = match exit {
            Exit::Sum => Step::L115,
            Exit::Break => {
                if self.abserr == OFLOW {
                    Step::L115
                } else if self.ier + self.ierror == 0 {
                    Step::L110
                } else {
                    if self.ierror == 3 {
                        self.abserr += self.correc;
                    }
                    if self.ier == 0 {
                        self.ier = 3;
                    }
                    if self.result != 0.0 && self.area != 0.0 {
                        Step::L105
                    } else if self.abserr > self.errsum {
                        Step::L115
                    } else if self.area == 0.0 {
                        Step::L130
                    } else {
                        Step::L110
                    }
                }
            }
        };
        let (result, area) = (self.result, self.area);
        if step == Step::L105 {
            step = if self.abserr / result.abs() > self.errsum / area.abs() {
                Step::L115
            } else {
                Step::L110
            };
        }
        if step == Step::L110 {
            // Test on divergence.
            if !(self.ksgn == -1 && result.abs().max(area.abs()) <= self.defabs * 0.01)
                && (0.01 > result / area || result / area > 100.0 || self.errsum > area.abs())
            {
                self.ier = 6;
            }
            step = Step::L130;
        }
        if step == Step::L115 {
            self.result = 0.0;
            for r in &self.rlist[..=last_l] {
                self.result += *r;
            }
            self.abserr = self.errsum;
        }
        if self.ier > 2 {
            self.ier -= 1;
        }
        (self.result, self.abserr, self.ier)
    }
}
