// Proximity: the point-triangle and edge-edge pairs of the cloth that are closer than the
// thickness (SPEC "Proximity constraints", the repulsion pairs of Bridson 2002 / Mueller 2007),
// found on the BVH's trees. The solver keeps such pairs apart.
#pragma once

#include "untangle/bvh.hpp"

namespace untangle {

struct PointTrianglePair {
  Index point = kNoIndex;
  Index triangle = kNoIndex;
  auto operator<=>(const PointTrianglePair&) const = default;
};

struct EdgeEdgePair {
  std::array<Index, 2> edges{kNoIndex, kNoIndex};  // edges[0] < edges[1]
  auto operator<=>(const EdgeEdgePair&) const = default;
};

struct ProximityPairs {
  std::vector<PointTrianglePair> point_triangle;  // sorted, unique
  std::vector<EdgeEdgePair> edge_edge;            // sorted, unique
  std::size_t size() const { return point_triangle.size() + edge_edge.size(); }
};

// Finds the pairs closer than a thickness, again and again on one mesh (the solver searches twice
// per frame). What depends only on the mesh is worked out once: which leaf owns each vertex and
// edge (each is tested only from its owner, so every pair is tested once), and the parts of every
// leaf. The search walks the BVH's trees with volumes of its own, refit here to the positions
// and inflated by a margin beyond the thickness; the BVH itself is neither refit nor changed.
// The leaf pairs of a walk are kept, and tested again without a walk as long as no particle has
// moved farther than the margin since.
// Topological neighbours are left out, as bending keeps them apart and the narrow phase skips
// them too: a point is not paired with a triangle of a leaf that holds it or shares a polygon
// with it (ClothMesh::vertex_ring), nor an edge with an edge whose end points share a polygon.
// With ring_pairs only what shares a vertex is left out (a point with a triangle of a leaf that
// holds it, edges with a common end or of one leaf), as in the narrow phase: a fold one polygon
// wide crosses between triangles one ring apart, and only such pairs can hold it open.
// Parallel; the result does not depend on the thread count.
class ProximitySearch {
 public:
  // The parts of one BVH leaf: all its vertices (for the neighbour rule), its detectable
  // triangles, and the vertices and edges it owns.
  struct LeafParts {
    std::array<Index, 4> vertices{};
    std::array<Index, 4> owned_vertices{};
    std::array<Index, 2> triangles{};
    std::array<Index, 5> owned_edges{};
    int vertex_count = 0, owned_vertex_count = 0, triangle_count = 0, owned_edge_count = 0;
  };

  // The volumes of the vertices, triangles and edges at the positions of a search (a swept
  // search: over their whole way), inflated by half the thickness: two primitives closer than the
  // thickness have overlapping volumes. The cheap test before the exact distance; the diagonal axes
  // reject much of what boxes keep between neighbouring polygons.
  struct PrimitiveVolumes {
    std::vector<Kdop18f> vertices, triangles, edges;
  };

  // Keeps a reference to the BVH (for its tree shape and mesh), which must outlive the search.
  explicit ProximitySearch(const Bvh& bvh);

  const ClothMesh& mesh() const { return bvh_->mesh(); }

  // Pairs closer than `thickness` at `positions`; valid until the next call. With `from`, also
  // the pairs that pass through each other on the straight way from `from` to `positions` (a
  // point through a triangle, an edge through an edge, closer than the thickness where they
  // cross): a motion faster than the thickness per step cannot carry a layer through another
  // unseen (swept proximity, as continuous collision detection finds it).
  const ProximityPairs& find(const Positions& positions, double thickness, bool ring_pairs = false,
                             const Positions* from = nullptr);

  // The mesh's rest shape changed (ClothMesh::set_rest_positions), and with it which triangles
  // are detectable: the leaves' triangle lists follow.
  void update_detectable_triangles();

 private:
  struct Task {
    Index a, b;  // a == b: the self test of a subtree; else the test of two subtrees
  };
  struct Node {
    Index left, right, leaf;  // as in BvhNode, without the volume: the walk reads only these
  };
  // The tests of a leaf pair (a < b) that a neighbour rule skips. Bit i of points_a: owned
  // vertex i of a; of points_b: owned vertex j of b; bit 5 i + j of edges: owned edge i of a
  // with owned edge j of b.
  struct SkipMasks {
    std::uint8_t points_a = 0, points_b = 0;
    std::uint32_t edges = 0;
  };
  // A leaf pair with topological neighbours between them, under either rule. A pair not listed
  // skips nothing.
  struct Skips {
    Index other = kNoIndex;  // b
    SkipMasks ring;          // sharing a polygon
    SkipMasks shared;        // sharing a vertex (ring_pairs)
  };
  // Two BVH leaves whose volumes, inflated by the thickness, overlap: their primitives are
  // tested for close pairs.
  struct CloseLeafPair {
    Index a, b;  // a < b
  };
  // The tests of a leaf pair (a < b) that the neighbour rule keeps, as bits like those of Skips.
  struct LiveTests {
    std::uint8_t points_a = 0, points_b = 0;
    bool known = false;  // worked out yet (see live_)
    std::uint32_t edges = 0;
  };

  void find_skips();
  // Walks the trees again unless the last walk's leaf pairs still hold at x (see
  // core/src/proximity/reuse.cpp); when they do, lists the leaves that moved beyond the margin
  // since in moved_leaves_.
  void walk_or_reuse(const Positions& x, double thickness, bool ring_pairs, const Positions* from);
  // The volume of a leaf's vertices at x, grown by inflation.
  Kdop18f leaf_volume(Index leaf, const Positions& x, double inflation) const;
  void refit(const Positions& x, double inflation);
  // The leaf pairs whose volumes, inflated by `inflation`, overlap at x: into leaf_pairs_.
  void find_leaf_pairs(const Positions& x, double inflation);
  // The leaves with a particle farther than margin from where the last walk saw it.
  void find_moved_leaves(const Positions& x, double margin);
  // Tests a moved leaf against the leaves whose current volumes meet its own.
  void look_up(Index leaf, const Positions& x, double thickness, bool ring_pairs,
               std::vector<Index>& stack, ProximityPairs& out) const;
  template <typename Visit>
  void children(Task task, Visit&& visit) const;
  LiveTests live_tests(Index a, Index b, bool ring_pairs) const;
  void run(Task task, std::vector<CloseLeafPair>& out) const;
  void test_leaves(const CloseLeafPair& pair, const LiveTests& tests, const Positions& x,
                   double thickness, ProximityPairs& out) const;

  const Bvh* bvh_;
  std::vector<LeafParts> parts_;   // per leaf
  std::vector<Node> nodes_;        // per BVH node
  std::vector<Index> leaf_nodes_;  // the nodes that are leaves
  // The walk's volumes, per BVH node: rounded outwards to floats, so they contain the double
  // ones and the walk may add a leaf pair that only touches after rounding, never lose one.
  std::vector<Kdop18f> volumes_;
  // Per leaf, at the positions of the current search and inflated by half the thickness: two
  // leaves whose boxes miss each other hold no close pair, whatever the walk found.
  std::vector<Kdop18f> leaf_boxes_;
  PrimitiveVolumes primitive_volumes_;
  std::vector<Index> skip_offsets_;  // the Skips of leaf a: skips_[offsets[a] .. offsets[a + 1])
  std::vector<Skips> skips_;         // by a, then by b
  // The leaf pairs of the last walk of the trees, at walked_positions_, for walked_thickness_.
  // Their tests under the neighbour rule are worked out in the search, for the pairs whose
  // boxes meet: most pairs of a walk are farther apart than the thickness.
  std::vector<CloseLeafPair> leaf_pairs_;
  // Per leaf pair of the walk, its tests under the neighbour rule of live_ring_pairs_, worked
  // out when its boxes first meet: the searches that reuse a walk meet mostly the same pairs.
  std::vector<LiveTests> live_;
  bool live_ring_pairs_ = false;
  Positions walked_positions_;
  double walked_thickness_ = 0;
  // A swept search's walk covers the way from walked_from_ as well.
  bool walked_swept_ = false;
  Positions walked_from_;
  const Positions* from_ = nullptr;  // of the current search
  // Since the walk: which vertices and leaves moved beyond the margin, and those leaves.
  std::vector<std::uint8_t> vertex_moved_, leaf_moved_;
  std::vector<Index> moved_leaves_;
  // Per BVH node, at the current search's positions inflated by half the thickness, for the
  // look-ups (filled only when there are moved leaves).
  std::vector<Kdop18f> current_volumes_;
  std::vector<std::vector<Index>> stacks_;  // per thread, for the look-ups
  // Kept between calls, so a search allocates nothing once warm.
  std::vector<Task> tasks_, next_tasks_;
  std::vector<std::vector<CloseLeafPair>> thread_leaf_pairs_;
  std::vector<ProximityPairs> found_;  // per thread
  ProximityPairs result_;
};

// The point of triangle (a, b, c) closest to p, with its barycentric weights (Ericson 5.1.5).
Vec3 closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                               Vec3& barycentric);

// Parameters s, t of the closest points a0 + s (a1 - a0) and b0 + t (b1 - b0) of two segments
// (Ericson 5.1.9); degenerate segments are handled.
void closest_points_of_segments(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1,
                                double& s, double& t);

}  // namespace untangle
