"""A dependency-free line plot written as PNG (NumPy + zlib), so the main job can save its curves
on a machine with nothing but ampgrad's own requirements."""
import struct
import zlib

import numpy as np

# 5x7 bitmap digits and a few letters for axis labels.
_GLYPHS = {
    "0": "01110100011001110101110011000101110", "1": "00100011000010000100001000010001110",
    "2": "01110100010000100010001000100011111", "3": "11110000010000101110000010000111110",
    "4": "00010001100101010010111110001000010", "5": "11111100001111000001000011000101110",
    "6": "00110010001000011110100011000101110", "7": "11111000010001000100010000100001000",
    "8": "01110100011000101110100011000101110", "9": "01110100011000101111000010001001100",
    ".": "00000000000000000000000000110001100", "e": "00000000000111010001111111000001110",
    "-": "00000000000000011111000000000000000", "+": "00000001000010011111001000010000000",
}


def _text(img, x, y, s, color):
    for ch in s:
        g = _GLYPHS.get(ch)
        if g:
            for i, bit in enumerate(g):
                if bit == "1":
                    yy, xx = y + i // 5, x + i % 5
                    if 0 <= yy < img.shape[0] and 0 <= xx < img.shape[1]:
                        img[yy, xx] = color
        x += 6


def _line(img, x0, y0, x1, y1, color):
    n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    xs = np.linspace(x0, x1, n).round().astype(int)
    ys = np.linspace(y0, y1, n).round().astype(int)
    ok = (xs >= 0) & (xs < img.shape[1]) & (ys >= 0) & (ys < img.shape[0])
    img[ys[ok], xs[ok]] = color


def _panel(img, top, height, left, width, values, color, log=False):
    v = np.asarray(values, dtype=np.float64)
    if log:
        v = np.log2(np.maximum(v, 1e-30))
    lo, hi = float(np.min(v)), float(np.max(v))
    if hi - lo < 1e-12:
        lo, hi = lo - 1, hi + 1
    _line(img, left, top, left, top + height, (0, 0, 0))
    _line(img, left, top + height, left + width, top + height, (0, 0, 0))
    xs = left + np.arange(len(v)) * (width / max(len(v) - 1, 1))
    ys = top + height - (v - lo) / (hi - lo) * height
    for i in range(len(v) - 1):
        _line(img, xs[i], ys[i], xs[i + 1], ys[i + 1], color)
    fmt = (lambda z: f"{2 ** z:.0f}") if log else (lambda z: f"{z:.3f}")
    _text(img, 2, top, fmt(hi), (0, 0, 0))
    _text(img, 2, top + height - 7, fmt(lo), (0, 0, 0))


def save_curves(path, loss, scale, width=640, height=420):
    """Top panel: loss per step; bottom panel: loss scale per step (log2 axis)."""
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    _panel(img, 10, height // 2 - 30, 60, width - 80, loss, (200, 30, 30))
    _panel(img, height // 2 + 10, height // 2 - 30, 60, width - 80, scale, (30, 60, 200), log=True)
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(height))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)
