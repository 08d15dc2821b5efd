"""Writes dct32.txt: inputs and scipy.fftpack.dct outputs (the doubles' bits in hex) that
udfs/src/py/pocketfft.rs must reproduce exactly. Run with the dj-reference venv's python."""
import numpy as np
from scipy.fftpack import dct

rng = np.random.default_rng(7)
vectors = [rng.integers(0, 256, 32).astype(np.float64) for _ in range(6)]
vectors.append(np.full(32, 200.0))
vectors.append(np.array([10.0] * 16 + [240.0] * 16))
vectors.append(rng.random(32) * 1000)
# A 32x32 image through both passes, as the perceptual hash computes it.
image = rng.integers(0, 256, (32, 32)).astype(np.uint8)
flat = np.full((32, 32), 77, dtype=np.uint8)
with open("dct32.txt", "w") as f:
    for v in vectors:
        f.write("vec " + " ".join(x.hex() for x in v) + "\n")
        f.write("dct " + " ".join(float(x).hex() for x in dct(v)) + "\n")
    for img in (image, flat):
        f.write("img " + " ".join(str(int(x)) for x in img.flatten()) + "\n")
        out = dct(dct(img, axis=0), axis=1)
        f.write("dct " + " ".join(float(x).hex() for x in out.flatten()) + "\n")
