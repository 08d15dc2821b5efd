//! Emulations of the Python, numpy and scipy behaviour Data-Juicer's results depend on, kept apart
//! from the operators: float formatting and the ujson round trip, numpy's random generators,
//! scipy's numerical integration, the `regex` module's substitution, `os.path`'s joins and
//! `str.lower()`.

pub mod numpy_legacy;
pub mod numpy_rng;
pub mod os_path;
#[cfg(feature = "media")]
pub mod pil;
pub mod pocketfft;
pub mod pyfloat;
pub mod regex;
pub mod scipy_quad;
pub(crate) mod str_lower;
