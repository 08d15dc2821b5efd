//! The Pillow steps Data-Juicer's image hashes go through, with Pillow's integer arithmetic:
//! opening a file and converting it to RGB (`Image.open(...).convert("RGB")`), resizing with the
//! Lanczos filter (`resize(size, Image.LANCZOS)`, Resample.c's fixed-point two-pass resampler)
//! and converting to grayscale (`convert("L")`, ITU-R 601-2 luma in 16-bit fixed point).
//!
//! JPEG files are decoded by libjpeg-turbo with Pillow's settings (accurate integer IDCT, fancy
//! upsampling), so the pixels are Pillow's. PNG, GIF, BMP and TIFF are lossless and decoded by
//! the `image` crate; RGBA and palette images lose their alpha as `convert("RGB")` drops it;
//! 16-bit channels keep their high byte, as Pillow's PNG decoder does for RGB, while a 16-bit
//! grayscale image is clipped at 255, as Pillow's `I;16` to `RGB` conversion does. Not
//! supported: CMYK JPEG, and WebP (its lossy decoding is not guaranteed to be libwebp's).

use std::path::Path;

/// An 8-bit RGB image, row-major, 3 bytes a pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgb {
    pub width: usize,
    pub height: usize,
    pub data: Vec<u8>,
}

/// Reads `path` as `Image.open(path).convert("RGB")` gives it.
pub fn open_rgb(path: &Path) -> Result<Rgb, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return decode_jpeg(&bytes);
    }
    let format =
        image::guess_format(&bytes).map_err(|_| "cannot identify image file".to_string())?;
    if format == image::ImageFormat::WebP {
        return Err(
            "WebP images are not supported (lossy WebP may not decode as libwebp does)".into(),
        );
    }
    let img = image::load_from_memory_with_format(&bytes, format).map_err(|e| e.to_string())?;
    let (width, height) = (img.width() as usize, img.height() as usize);
    use image::DynamicImage as D;
    let data: Vec<u8> = match &img {
        D::ImageLuma8(g) => g.as_raw().iter().flat_map(|&v| [v, v, v]).collect(),
        D::ImageLumaA8(g) => g
            .as_raw()
            .chunks(2)
            .flat_map(|p| [p[0], p[0], p[0]])
            .collect(),
        D::ImageRgb8(c) => c.as_raw().clone(),
        D::ImageRgba8(c) => c
            .as_raw()
            .chunks(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect(),
        D::ImageLuma16(g) => g
            .as_raw()
            .iter()
            .flat_map(|&v| {
                let v = v.min(255) as u8;
                [v, v, v]
            })
            .collect(),
        D::ImageLumaA16(g) => g
            .as_raw()
            .chunks(2)
            .flat_map(|p| {
                let v = (p[0] >> 8) as u8;
                [v, v, v]
            })
            .collect(),
        D::ImageRgb16(c) => c.as_raw().iter().map(|&v| (v >> 8) as u8).collect(),
        D::ImageRgba16(c) => c
            .as_raw()
            .chunks(4)
            .flat_map(|p| [(p[0] >> 8) as u8, (p[1] >> 8) as u8, (p[2] >> 8) as u8])
            .collect(),
        other => return Err(format!("unsupported pixel format {:?}", other.color())),
    };
    Ok(Rgb {
        width,
        height,
        data,
    })
}

/// libjpeg's warnings that Pillow decodes through (a truncated file is an error there).
fn is_tolerated_warning(message: &str) -> bool {
    [
        "Corrupt JPEG data",
        "unknown JFIF revision",
        "Invalid SOS parameters",
    ]
    .iter()
    .any(|w| message.contains(w))
}

fn decode_jpeg(bytes: &[u8]) -> Result<Rgb, String> {
    let mut decompressor = turbojpeg::Decompressor::new().map_err(|e| e.to_string())?;
    let header = decompressor.read_header(bytes).map_err(|e| e.to_string())?;
    if matches!(
        header.colorspace,
        turbojpeg::Colorspace::CMYK | turbojpeg::Colorspace::YCCK
    ) {
        return Err("CMYK JPEG images are not supported".into());
    }
    let (width, height) = (header.width, header.height);
    let mut data = vec![0u8; width * height * 3];
    let image = turbojpeg::Image {
        pixels: data.as_mut_slice(),
        width,
        pitch: width * 3,
        height,
        format: turbojpeg::PixelFormat::RGB,
    };
    match decompressor.decompress(bytes, image) {
        Ok(()) => {}
        Err(turbojpeg::Error::TurboJpegError(m)) if is_tolerated_warning(&m) => {}
        Err(e) => return Err(e.to_string()),
    }
    Ok(Rgb {
        width,
        height,
        data,
    })
}

/// `Image.fromarray(rgb).save(path)` for a `.jpg` path: Pillow's JPEG defaults (quality 75,
/// 4:2:0 chroma subsampling, baseline, accurate integer DCT, a JFIF header) through
/// libjpeg-turbo.
pub fn jpeg_bytes(width: usize, height: usize, rgb: &[u8]) -> Result<Vec<u8>, String> {
    let mut compressor = turbojpeg::Compressor::new().map_err(|e| e.to_string())?;
    compressor.set_quality(75).map_err(|e| e.to_string())?;
    compressor
        .set_subsamp(turbojpeg::Subsamp::Sub2x2)
        .map_err(|e| e.to_string())?;
    compressor
        .compress_to_vec(turbojpeg::Image {
            pixels: rgb,
            width,
            pitch: width * 3,
            height,
            format: turbojpeg::PixelFormat::RGB,
        })
        .map_err(|e| e.to_string())
}

const PRECISION_BITS: u32 = 32 - 8 - 2;

fn lanczos(x: f64) -> f64 {
    fn sinc(x: f64) -> f64 {
        if x == 0.0 {
            return 1.0;
        }
        let x = x * std::f64::consts::PI;
        x.sin() / x
    }
    if (-3.0..3.0).contains(&x) {
        sinc(x) * sinc(x / 3.0)
    } else {
        0.0
    }
}

/// Resample.c's `precompute_coeffs` (Lanczos, whole-image box) then `normalize_coeffs_8bpc`:
/// per output pixel, the first input pixel and the fixed-point weights.
fn coefficients(in_size: usize, out_size: usize) -> Vec<(usize, Vec<i32>)> {
    let scale = in_size as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = 3.0 * filterscale;
    let mut out = Vec::with_capacity(out_size);
    for xx in 0..out_size {
        let center = (xx as f64 + 0.5) * scale;
        let ss = 1.0 / filterscale;
        let xmin = ((center - support + 0.5) as i64).max(0) as usize;
        let xmax = ((center + support + 0.5) as i64).min(in_size as i64) as usize - xmin;
        let mut weights: Vec<f64> = (0..xmax)
            .map(|x| lanczos((x as f64 + xmin as f64 - center + 0.5) * ss))
            .collect();
        let ww: f64 = weights.iter().fold(0.0, |a, w| a + w);
        if ww != 0.0 {
            for w in &mut weights {
                *w /= ww;
            }
        }
        let fixed = weights
            .iter()
            .map(|&w| {
                let scaled = w * f64::from(1u32 << PRECISION_BITS);
                if w < 0.0 {
                    (-0.5 + scaled) as i32
                } else {
                    (0.5 + scaled) as i32
                }
            })
            .collect();
        out.push((xmin, fixed));
    }
    out
}

fn clip8(v: i32) -> u8 {
    (v >> PRECISION_BITS).clamp(0, 255) as u8
}

/// `img.resize((width, height), Image.LANCZOS)` of an RGB image.
pub fn resize_lanczos(img: &Rgb, width: usize, height: usize) -> Rgb {
    if img.width == width && img.height == height {
        return img.clone();
    }
    let vert = coefficients(img.height, height);
    let first_row = vert[0].0;
    let last_row = vert[height - 1].0 + vert[height - 1].1.len();
    let mut src = img.clone();
    if width != img.width {
        let horiz = coefficients(img.width, width);
        let rows = last_row - first_row;
        let mut data = vec![0u8; width * rows * 3];
        for y in 0..rows {
            let row = &img.data[(y + first_row) * img.width * 3..][..img.width * 3];
            for (xx, (xmin, k)) in horiz.iter().enumerate() {
                for c in 0..3 {
                    let mut ss: i32 = 1 << (PRECISION_BITS - 1);
                    for (x, w) in k.iter().enumerate() {
                        ss = ss.wrapping_add(i32::from(row[(x + xmin) * 3 + c]).wrapping_mul(*w));
                    }
                    data[(y * width + xx) * 3 + c] = clip8(ss);
                }
            }
        }
        src = Rgb {
            width,
            height: rows,
            data,
        };
    } else {
        src.data = src.data[first_row * width * 3..last_row * width * 3].to_vec();
        src.height = last_row - first_row;
    }
    if height == img.height && width != img.width {
        return src;
    }
    let mut data = vec![0u8; width * height * 3];
    for (yy, (ymin, k)) in vert.iter().enumerate() {
        let ymin = ymin - first_row;
        for xx in 0..width {
            for c in 0..3 {
                let mut ss: i32 = 1 << (PRECISION_BITS - 1);
                for (y, w) in k.iter().enumerate() {
                    let v = src.data[((y + ymin) * width + xx) * 3 + c];
                    ss = ss.wrapping_add(i32::from(v).wrapping_mul(*w));
                }
                data[(yy * width + xx) * 3 + c] = clip8(ss);
            }
        }
    }
    Rgb {
        width,
        height,
        data,
    }
}

/// `convert("L")` of an RGB image: `(R*19595 + G*38470 + B*7471 + 0x8000) >> 16`.
pub fn to_luma(img: &Rgb) -> Vec<u8> {
    img.data
        .chunks(3)
        .map(|p| {
            ((u32::from(p[0]) * 19595 + u32::from(p[1]) * 38470 + u32::from(p[2]) * 7471 + 0x8000)
                >> 16) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchanged_size_is_a_copy_and_flat_images_stay_flat() {
        let img = Rgb {
            width: 20,
            height: 10,
            data: [10u8, 200, 30].repeat(200),
        };
        assert_eq!(resize_lanczos(&img, 20, 10), img);
        for (w, h) in [(8, 8), (9, 8), (32, 32), (256, 256), (20, 5), (3, 10)] {
            let out = resize_lanczos(&img, w, h);
            assert_eq!((out.width, out.height), (w, h));
            assert_eq!(out.data, [10u8, 200, 30].repeat(w * h), "{w}x{h}");
        }
        // (10 * 19595 + 200 * 38470 + 30 * 7471 + 0x8000) >> 16
        assert_eq!(to_luma(&img)[0], 124);
    }
}
