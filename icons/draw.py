"""Draws icons/icon.png (512x512 RGBA): a ring, the shape of the wearables we read, crossed by a
pulse line, on a rounded teal-to-indigo square. Pure Python (zlib), so anyone can redraw it:
    python3 icons/draw.py
"""
import math, struct, zlib, os

N = 512
RADIUS = 104          # corner radius of the square
RING_R, RING_W = 150, 34
PULSE = [(40, 276), (170, 276), (200, 226), (236, 352), (276, 168), (312, 300), (336, 256), (472, 256)]
PULSE_W = 15


def lerp(a, b, t):
    return a + (b - a) * t


def smooth(d, w=1.0):
    """Coverage of an edge at signed distance d (negative inside), about one pixel wide."""
    return max(0.0, min(1.0, 0.5 - d / w))


def seg_dist(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def square_dist(x, y):
    """Signed distance to the rounded square (negative inside)."""
    qx = abs(x - N / 2) - (N / 2 - RADIUS)
    qy = abs(y - N / 2) - (N / 2 - RADIUS)
    return math.hypot(max(qx, 0), max(qy, 0)) + min(max(qx, qy), 0) - RADIUS


top, bottom = (13, 148, 136), (55, 48, 163)   # teal-600, indigo-800
rows = []
for y in range(N):
    row = bytearray([0])
    for x in range(N):
        px, py = x + 0.5, y + 0.5
        a = smooth(square_dist(px, py))
        t = (px + py) / (2 * N)
        r, g, b = (lerp(top[i], bottom[i], t) for i in range(3))
        # the ring: white, slightly translucent so the gradient shows through
        ring = smooth(abs(math.hypot(px - N / 2, py - N / 2) - RING_R) - RING_W / 2) * 0.88
        # the pulse line: opaque white, round joins
        d = min(seg_dist(px, py, *PULSE[i], *PULSE[i + 1]) for i in range(len(PULSE) - 1))
        pulse = smooth(d - PULSE_W / 2)
        # a dark halo under the pulse, so it reads over the ring
        halo = smooth(d - PULSE_W / 2 - 9, 6) * 0.35 * ring
        w = max(ring, pulse)
        r, g, b = (c * (1 - halo) for c in (r, g, b))
        r, g, b = (lerp(c, 255, w) for c in (r, g, b))
        row += bytes([round(r), round(g), round(b), round(255 * a)])
    rows.append(bytes(row))


def chunk(kind, data):
    c = kind + data
    return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c) & 0xFFFFFFFF)


png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", N, N, 8, 6, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "icon.png")
open(out, "wb").write(png)
print(out, len(png), "bytes")
