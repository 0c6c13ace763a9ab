#include "untangle/responses/kikuchi.hpp"

#include <algorithm>
#include <cmath>

#include "../parallel_errors.hpp"

namespace untangle {
namespace {

using Triangle = std::array<Vec3, 3>;

// A triangle is on one side of a plane only when clearly so, far above rounding.
constexpr double kSideTolerancePerSpacing = 1e-9;

// At most 3 + 3 corners survive clipping a triangle by three half-spaces.
struct Polygon {
  std::array<Vec3, 9> points;
  int size = 0;
};

Vec3 unit_normal(const Triangle& t) {
  const Vec3 n = (t[1] - t[0]).cross(t[2] - t[0]);
  const double length = n.norm();
  return length > 0 ? Vec3(n / length) : Vec3::Zero();
}

// `other` clipped to the infinite prism swept by `base` along its normal (Sutherland-Hodgman).
// Its corners are other's vertices over base, crossings of the prism walls with other's edges,
// and the points of other above base's corners: the corners of the projected overlap, lifted
// back onto other.
Polygon clip_to_prism(const Triangle& base, const Vec3& base_normal, const Triangle& other) {
  Polygon polygon;
  for (int i = 0; i < 3; ++i) polygon.points[polygon.size++] = other[i];
  for (int i = 0; i < 3 && polygon.size > 0; ++i) {
    const Vec3 inward = base_normal.cross(base[(i + 1) % 3] - base[i]);
    Polygon clipped;
    for (int k = 0; k < polygon.size; ++k) {
      const Vec3& p = polygon.points[k];
      const Vec3& q = polygon.points[(k + 1) % polygon.size];
      const double dp = (p - base[i]).dot(inward);
      const double dq = (q - base[i]).dot(inward);
      if (dp >= 0) clipped.points[clipped.size++] = p;
      if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) {
        clipped.points[clipped.size++] = p + (dp / (dp - dq)) * (q - p);
      }
    }
    polygon = clipped;
  }
  return polygon;
}

double triangle_inverse_mass(const std::array<Index, 3>& corners,
                             const std::vector<double>& inverse_mass) {
  double mass = 0;
  for (Index v : corners) {
    if (inverse_mass[v] <= 0) return 0;  // a pinned corner holds the whole triangle
    mass += 1.0 / inverse_mass[v];
  }
  return 1.0 / mass;
}

Triangle corners_of(const ClothMesh& mesh, const Positions& x, Index t) {
  const auto& c = mesh.triangles[t];
  return {x[c[0]], x[c[1]], x[c[2]]};
}

bool share_vertex(const std::array<Index, 3>& a, const std::array<Index, 3>& b) {
  for (Index u : a) {
    for (Index v : b) {
      if (u == v) return true;
    }
  }
  return false;
}

// +1 / -1 when all of other that lies over base is strictly in front of / behind its plane;
// 0 when other is not over base or straddles the plane.
std::int8_t side_over(const Triangle& base, const Triangle& other, double tolerance) {
  const Vec3 n = unit_normal(base);
  if (n.isZero()) return 0;
  const Polygon polygon = clip_to_prism(base, n, other);
  if (polygon.size == 0) return 0;
  bool front = true, back = true;
  for (int k = 0; k < polygon.size; ++k) {
    const double h = (polygon.points[k] - base[0]).dot(n);
    front = front && h > tolerance;
    back = back && h < -tolerance;
  }
  return front ? 1 : (back ? -1 : 0);
}

struct PairMove {
  Vec3 delta_a = Vec3::Zero();
  Vec3 delta_b = Vec3::Zero();
  bool moves = false;
  bool side_known = false;  // the side it moves to comes from history, not kDefaultSide
};

}  // namespace

double penetration_depth(const Triangle& base, const Triangle& other, int side) {
  const Vec3 n = unit_normal(base);
  if (n.isZero()) return 0;
  const Polygon polygon = clip_to_prism(base, n, other);
  double depth = 0;
  for (int k = 0; k < polygon.size; ++k) {
    depth = std::max(depth, -side * (polygon.points[k] - base[0]).dot(n));
  }
  return depth;
}

std::uint64_t KikuchiResponse::pair_key(Index a, Index b) {
  if (a > b) std::swap(a, b);
  return (static_cast<std::uint64_t>(a) << 32) | b;
}

KikuchiResponse::Sides KikuchiResponse::sides_of(const ResponseInput& input, Index a,
                                                 Index b) const {
  Sides sides;
  if (auto found = memory_.find(pair_key(a, b)); found != memory_.end()) {
    sides.known = found->second.side;
  } else if (input.start_positions != nullptr) {
    // Not seen close before: cloth that moves more than the thickness in one frame crosses
    // without ever being a close pair. Where one lay over the other at the start of the frame,
    // that is the side from before the crossing.
    const Triangle sa = corners_of(input.mesh, *input.start_positions, a);
    const Triangle sb = corners_of(input.mesh, *input.start_positions, b);
    const double tolerance = kSideTolerancePerSpacing * input.spacing;
    sides.known = {side_over(sa, sb, tolerance), side_over(sb, sa, tolerance)};
    sides.from_start = true;
  }
  for (int i = 0; i < 2; ++i) sides.used[i] = sides.known[i] != 0 ? sides.known[i] : kDefaultSide;
  return sides;
}

Displacement KikuchiResponse::compute(const ResponseInput& input) {
  const ClothMesh& mesh = input.mesh;
  const Positions& x = input.positions;
  const auto& pairs = input.intersections.pairs;
  const double cap = input.settings.response_strength * input.spacing;

  // Each pair is projected on its own (read-only memory), then gathered in pair order.
  std::vector<PairMove> moves(pairs.size());
  std::vector<Sides> sides(pairs.size());
  const auto pair_count = static_cast<std::ptrdiff_t>(pairs.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < pair_count; ++k) {
    errors.run([&] {
      const Index a = pairs[k][0], b = pairs[k][1];
      sides[k] = sides_of(input, a, b);
      const std::array<std::int8_t, 2>& side = sides[k].used;
      const Triangle ta = corners_of(mesh, x, a), tb = corners_of(mesh, x, b);
      const double depth_b = penetration_depth(ta, tb, side[0]);  // b into a, along a's normal
      const double depth_a = penetration_depth(tb, ta, side[1]);  // a into b, along b's normal
      // The smaller depth is measured against the plane its direction comes from; the measured
      // triangle moves along that direction, the other against it.
      const bool against_a = depth_b <= depth_a;
      const double depth = std::min(depth_a, depth_b);
      if (!(depth > 0)) return;
      // Apart by the thickness, not just touching: there the proximity push holds the pair on
      // the valid side instead of pushing it back through (it takes the side it sees).
      const double move = std::min(depth + input.settings.thickness, cap);
      const Vec3 direction =
          against_a ? Vec3(side[0] * unit_normal(ta)) : Vec3(side[1] * unit_normal(tb));
      const double wa = triangle_inverse_mass(mesh.triangles[a], input.inverse_mass);
      const double wb = triangle_inverse_mass(mesh.triangles[b], input.inverse_mass);
      if (wa + wb <= 0) return;
      const double sign_b = against_a ? 1.0 : -1.0;
      moves[k].delta_b = sign_b * move * wb / (wa + wb) * direction;
      moves[k].delta_a = -sign_b * move * wa / (wa + wb) * direction;
      moves[k].moves = true;
      moves[k].side_known = sides[k].known[against_a ? 0 : 1] != 0;
    });
  }
  errors.rethrow();

  Displacement out;
  // The proximity push is kept, as the method has it, except on the particles of pairs whose
  // valid side is known from history: a push there that opposes the move takes the pair back
  // through (on the two sheets, more pairs are left with it than with no response at all). With
  // only the fixed default side, the push is as good a guess.
  out.drop_opposing_proximity = true;
  std::vector<int> count(mesh.vertex_count(), 0);
  std::vector<std::uint8_t> side_known(mesh.vertex_count(), 0);
  Positions sum(mesh.vertex_count(), Vec3::Zero());
  bool any = false;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if (!moves[k].moves) continue;
    any = true;
    for (int i = 0; i < 2; ++i) {
      for (Index v : mesh.triangles[pairs[k][i]]) {
        sum[v] += i == 0 ? moves[k].delta_a : moves[k].delta_b;
        ++count[v];
        side_known[v] |= moves[k].side_known ? 1 : 0;
      }
    }
  }
  if (any) {
    out.delta.assign(mesh.vertex_count(), Vec3::Zero());
    out.near_contour = std::move(side_known);
    for (std::size_t v = 0; v < mesh.vertex_count(); ++v) {
      if (count[v] > 0) out.delta[v] = sum[v] / count[v];
    }
  }

  // Sides found at the start of the frame hold while the pair stays crossing or close.
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if (sides[k].from_start && sides[k].known != std::array<std::int8_t, 2>{0, 0}) {
      memory_[pair_key(pairs[k][0], pairs[k][1])].side = sides[k].known;
    }
  }
  remember_sides(input);
  return out;
}

void KikuchiResponse::remember_sides(const ResponseInput& input) {
  const ClothMesh& mesh = input.mesh;
  const Positions& x = input.positions;
  const auto& pairs = input.intersections.pairs;
  for (auto& entry : memory_) ++entry.second.frames_apart;
  for (const auto& pair : pairs) {
    if (auto found = memory_.find(pair_key(pair[0], pair[1])); found != memory_.end()) {
      found->second.frames_apart = 0;
    }
  }

  // Close pairs that do not cross record the side each triangle is on now.
  const Candidates candidates = input.bvh.find_candidates(input.settings.cull);
  const double tolerance = kSideTolerancePerSpacing * input.spacing;
  const auto leaf_pair_count = static_cast<std::ptrdiff_t>(candidates.leaf_pairs.size());
  std::vector<std::vector<std::pair<std::uint64_t, std::array<std::int8_t, 2>>>> observed(
      candidates.leaf_pairs.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 64)
  for (std::ptrdiff_t k = 0; k < leaf_pair_count; ++k) {
    errors.run([&] {
      const Leaf& la = mesh.leaves[candidates.leaf_pairs[k][0]];
      const Leaf& lb = mesh.leaves[candidates.leaf_pairs[k][1]];
      for (Index a : la) {
        for (Index b : lb) {
          if (a == kNoIndex || b == kNoIndex) continue;
          if (!mesh.triangle_detectable[a] || !mesh.triangle_detectable[b]) continue;
          if (share_vertex(mesh.triangles[a], mesh.triangles[b])) continue;
          const std::array<Index, 2> ordered{std::min(a, b), std::max(a, b)};
          if (std::binary_search(pairs.begin(), pairs.end(), ordered)) continue;
          const Triangle ta = corners_of(mesh, x, ordered[0]);
          const Triangle tb = corners_of(mesh, x, ordered[1]);
          const std::array<std::int8_t, 2> sides{side_over(ta, tb, tolerance),
                                                 side_over(tb, ta, tolerance)};
          observed[k].push_back({pair_key(ordered[0], ordered[1]), sides});
        }
      }
    });
  }
  errors.rethrow();
  for (const auto& list : observed) {
    for (const auto& [key, sides] : list) {
      auto found = memory_.find(key);
      if (found == memory_.end()) {
        // Side by side (neither over the other) tells nothing: not worth an entry.
        if (sides[0] == 0 && sides[1] == 0) continue;
        found = memory_.emplace(key, PairSides{}).first;
      }
      PairSides& remembered = found->second;
      remembered.frames_apart = 0;
      for (int i = 0; i < 2; ++i) {
        if (sides[i] != 0) remembered.side[i] = sides[i];
      }
    }
  }
  std::erase_if(memory_, [](const auto& entry) {
    return entry.second.frames_apart > kForgetFrames ||
           entry.second.side == std::array<std::int8_t, 2>{0, 0};
  });
}

}  // namespace untangle
