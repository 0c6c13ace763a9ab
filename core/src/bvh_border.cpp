// The projected-border test of culling (Volino 1994): a region whose normals lie in a cone
// under 90 degrees cannot intersect itself if its border, seen along the cone axis, does not.
#include <algorithm>
#include <utility>

#include "bvh_internal.hpp"

namespace untangle {

namespace {

using bvh_detail::Point2;

// Proper or touching intersection of 2D segments (touching counts: the test is conservative).
double orient(const Point2& a, const Point2& b, const Point2& c) {
  return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}
bool on_segment(const Point2& a, const Point2& b, const Point2& p) {
  return std::min(a.x, b.x) <= p.x && p.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= p.y &&
         p.y <= std::max(a.y, b.y);
}
bool segments_touch(const Point2& a, const Point2& b, const Point2& c, const Point2& d) {
  const double o1 = orient(a, b, c), o2 = orient(a, b, d);
  // c and d strictly on one side of ab (most pairs): only a or b lying on cd is left, and the
  // cheap box test of on_segment goes first.
  if ((o1 > 0 && o2 > 0) || (o1 < 0 && o2 < 0)) {
    return (on_segment(c, d, a) && orient(c, d, a) == 0) ||
           (on_segment(c, d, b) && orient(c, d, b) == 0);
  }
  const double o3 = orient(c, d, a), o4 = orient(c, d, b);
  if (((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0))) {
    return true;
  }
  return (o1 == 0 && on_segment(a, b, c)) || (o2 == 0 && on_segment(a, b, d)) ||
         (o3 == 0 && on_segment(c, d, a)) || (o4 == 0 && on_segment(c, d, b));
}

}  // namespace

// The border loop projected on the plane normal to the cone axis must not cross or touch
// itself. Sweep over the segments sorted by their smallest u: only segments whose u ranges
// overlap are compared (the same pairs whatever the order of equal u, so the answer does not
// depend on it). The projection basis is turned by a generic angle, so the straight borders of
// grids do not line up with u (that would make every pair overlap in u). Each corner of the
// loop is projected once; segment k joins corners k and k + 1, its ends kept in its edge's own
// vertex order, so every orientation is computed as a test per edge computes it.
bool Bvh::border_is_simple_in_projection(Index n, const Positions& positions,
                                         BorderScratch& scratch) const {
  const Index offset = node_border_edges_.offsets[n];
  const auto count = static_cast<Index>(node_border_edges_.offsets[n + 1] - offset);
  const BorderCorner* corners = border_corners_.data() + offset;
  const Vec3& axis = nodes_[n].cone.axis;
  Vec3 u = Vec3(0.5773502691896258, 0.6215917910601614, 0.5297590554736018).cross(axis);
  if (u.squaredNorm() < 1e-6)
    u = Vec3(0.8110771634476468, -0.3522345137562497, 0.4669118823567).cross(axis);
  u.normalize();
  const Vec3 v = axis.cross(u);
  std::vector<Point2>& points = scratch.points;
  std::vector<Point2>& ends = scratch.ends;
  std::vector<SweepKey>& keys = scratch.keys;
  points.resize(count + 1);
  ends.resize(2 * count);
  keys.resize(count);
  for (Index k = 0; k < count; ++k) {
    const Vec3& p = positions[corners[k].vertex];
    points[k] = {p.dot(u), p.dot(v)};
  }
  points[count] = points[0];
  for (Index k = 0; k < count; ++k) {
    const bool reversed = corners[k].reversed != 0;
    const Point2& a = points[k + (reversed ? 1 : 0)];
    const Point2& b = points[k + (reversed ? 0 : 1)];
    ends[2 * k] = a;
    ends[2 * k + 1] = b;
    keys[k] = {std::min(a.x, b.x), std::max(a.x, b.x), k};
  }
  std::sort(keys.begin(), keys.end(),
            [](const SweepKey& x, const SweepKey& y) { return x.u_min < y.u_min; });
  for (Index i = 0; i < count; ++i) {
    const SweepKey& key = keys[i];
    for (Index j = i + 1; j < count && keys[j].u_min <= key.u_max; ++j) {
      Index s = key.segment, r = keys[j].segment;
      if (r + 1 == s || (s == 0 && r + 1 == count)) std::swap(s, r);
      const Point2 &sa = ends[2 * s], &sb = ends[2 * s + 1];
      const Point2 &ra = ends[2 * r], &rb = ends[2 * r + 1];
      // On a simple loop only neighbours share a vertex; here r starts where s ends.
      if (r == s + 1 || (r == 0 && s + 1 == count)) {
        // Neighbours on the loop meet at their common vertex; they must not fold back onto
        // each other (the far end of one lying on the other).
        const Point2& far_s = points[s];
        const Point2& far_r = points[r + 1];
        if ((on_segment(sa, sb, far_r) && orient(sa, sb, far_r) == 0) ||
            (on_segment(ra, rb, far_s) && orient(ra, rb, far_s) == 0)) {
          return false;
        }
        continue;
      }
      if (segments_touch(sa, sb, ra, rb)) return false;
    }
  }
  return true;
}

}  // namespace untangle
