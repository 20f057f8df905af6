'use strict';
/*
 * Per-viewer interest in the tests (docs/protocol.md, "Views"): cameras as
 * view-projection matrices, and the server's culling rule re-done node by
 * node from a tree (GET /api/scenes/{name}): a node is visible when it has
 * no bounds, or when its world box (Arvo's method, as server/core/math.c
 * computes it) is outside none of the six planes and projects to at least
 * min_px. The operations are those of server/core/view.c in the same
 * order, so the doubles agree bit for bit.
 */

/* out = a * b, column-major 4x4. */
function mul4(a, b) {
  const out = new Array(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) sum += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = sum;
    }
  }
  return out;
}

/* A perspective camera at 'eye' looking down -z (three.js's projection). */
function perspectiveVp(fovDeg, aspect, near, far, eye) {
  const p = new Array(16).fill(0);
  const t = 1 / Math.tan((fovDeg * Math.PI) / 180 / 2);
  p[0] = t / aspect;
  p[5] = t;
  p[10] = (far + near) / (near - far);
  p[11] = -1;
  p[14] = (2 * far * near) / (near - far);
  const v = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -eye[0], -eye[1], -eye[2], 1];
  return mul4(p, v);
}

/* The six planes [n, d] of a view-projection matrix (view_from_vp). */
function planesOf(vp) {
  const planes = [];
  for (let k = 0; k < 6; k++) {
    const r = Math.floor(k / 2);
    const sign = k % 2 ? -1 : 1;
    planes.push([vp[3] + sign * vp[r], vp[7] + sign * vp[4 + r], vp[11] + sign * vp[8 + r],
      vp[15] + sign * vp[12 + r]]);
  }
  return planes;
}

/* The world box of local bounds through world matrix m (aabb_transform). */
function worldBox(bounds, m) {
  const lo = bounds.min;
  const hi = bounds.max;
  const outLo = [0, 0, 0];
  const outHi = [0, 0, 0];
  for (let r = 0; r < 3; r++) {
    outLo[r] = outHi[r] = m[12 + r];
    for (let c = 0; c < 3; c++) {
      const a = m[c * 4 + r] * lo[c];
      const b = m[c * 4 + r] * hi[c];
      outLo[r] += Math.min(a, b);
      outHi[r] += Math.max(a, b);
    }
  }
  return { min: outLo, max: outHi };
}

/* plane_classify: -1 outside, 1 inside, 0 straddling. */
function classify(p, box) {
  const far = [0, 1, 2].map((i) => (p[i] >= 0 ? box.max[i] : box.min[i]));
  const near = [0, 1, 2].map((i) => (p[i] >= 0 ? box.min[i] : box.max[i]));
  if (p[0] * far[0] + p[1] * far[1] + p[2] * far[2] + p[3] < 0) return -1;
  if (p[0] * near[0] + p[1] * near[1] + p[2] * near[2] + p[3] >= 0) return 1;
  return 0;
}

/* view_node_px: the projected diameter in pixels of the box's sphere. */
function nodePx(view, box) {
  const vp = view.vp;
  const c = [0, 1, 2].map((i) => (box.min[i] + box.max[i]) * 0.5);
  const d = [0, 1, 2].map((i) => box.max[i] - c[i]);
  const radius = Math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  const w = vp[3] * c[0] + vp[7] * c[1] + vp[11] * c[2] + vp[15];
  if (!(w > 0)) return Infinity;
  const rx = Math.sqrt(vp[0] * vp[0] + vp[4] * vp[4] + vp[8] * vp[8]);
  const ry = Math.sqrt(vp[1] * vp[1] + vp[5] * vp[5] + vp[9] * vp[9]);
  return (radius * Math.max(view.viewport[0] * rx, view.viewport[1] * ry)) / w;
}

/* The ids of the tree's nodes visible in 'view' ({vp, viewport, min_px}). */
function visibleIds(treeNodes, view) {
  const planes = planesOf(view.vp);
  const out = new Set();
  for (const n of treeNodes) {
    if (!n.bounds) { out.add(n.id); continue; }
    const box = worldBox(n.bounds, n.world);
    if (planes.some((p) => classify(p, box) < 0)) continue;
    if ((view.min_px || 0) > 0 && !(nodePx(view, box) >= view.min_px)) continue;
    out.add(n.id);
  }
  return out;
}

/* The ids a client's mirror of a scene draws (nodes not hidden). */
function shownIds(client, scene) {
  const out = new Set();
  for (const [id, n] of client.scenes.get(scene).nodes) if (!n.hidden) out.add(id);
  return out;
}

/* The differences between two sets of ids, as sentences. */
function setDiffs(got, want, what = 'shown') {
  const out = [];
  for (const id of want) if (!got.has(id)) out.push(`${id}: visible but not ${what}`);
  for (const id of got) if (!want.has(id)) out.push(`${id}: ${what} but not visible`);
  return out;
}

module.exports = { perspectiveVp, planesOf, worldBox, nodePx, visibleIds, shownIds, setDiffs, mul4 };
