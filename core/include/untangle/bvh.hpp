// Bvh: a bounding volume hierarchy over the mesh leaves (quads or lone triangles), one tree per
// piece. Built top-down once, refit bottom-up each frame keeping its shape (SPEC "BVH").
// Self traversal culls regions that cannot intersect themselves: normal cone under 90 degrees
// and a border that does not overlap itself seen along the cone axis (Volino 1994).
#pragma once

#include <cstdint>
#include <span>

#include "untangle/kdop.hpp"
#include "untangle/mesh.hpp"
#include "untangle/normal_cone.hpp"

namespace untangle {

// A node's links, cone and culling flag. Its volume lives in BvhTraversalNode (Bvh::volume).
struct BvhNode {
  NormalCone cone;
  Index left = kNoIndex;  // children; kNoIndex for a leaf node
  Index right = kNoIndex;
  Index leaf = kNoIndex;  // index into ClothMesh::leaves for a leaf node
  Index parent = kNoIndex;
  Index piece = 0;
  bool cullable = false;  // set by refit: this node's region cannot intersect itself
  bool is_leaf() const { return left == kNoIndex; }
};

// What the pair traversal reads of a node, packed apart from BvhNode: the volume and the links.
// The volume is kept in single precision only, rounded outwards from the double projections of
// the leaves' corners (so it contains the exact volume): half the bytes to refit and traverse,
// and a parent's volume is the exact float union of its children's. Refit keeps it in step with
// the nodes.
struct BvhTraversalNode {
  Kdop18f volume;
  float size = 0;  // the sum of the volume's x, y and z extents: the traversal descends the larger
  Index left = kNoIndex;
  Index right = kNoIndex;
  Index leaf = kNoIndex;
  bool is_leaf() const { return left == kNoIndex; }
};

using LeafPair = std::array<Index, 2>;  // indices into ClothMesh::leaves, [0] < [1]

struct Candidates {
  std::vector<LeafPair> leaf_pairs;  // overlapping leaf pairs, deterministic order
  std::vector<Index> culled_nodes;   // nodes whose self test was skipped (drawn cyan)
};

// The traversal's per-task lists, kept from one call to the next: fresh ones would be allocated
// and grown again every frame. Use one per thread that calls find_candidates.
struct CandidateBuffers {
  std::vector<std::vector<LeafPair>> pairs;
  std::vector<std::vector<Index>> culled;
};

class Bvh {
 public:
  // Builds the trees on `positions` (median split of leaf centroids along the longest of the
  // 18-DOP axes, subtrees in parallel), each node's volume and cone as its subtree is finished
  // (a refit with no inflation, in the same pass), then which nodes are disks and which are
  // cullable.
  // Throws std::invalid_argument when positions do not match the mesh.
  Bvh(const ClothMesh& mesh, const Positions& positions);

  // Bottom-up: volumes (inflated by `inflation`), normal cones and the culling flag.
  void refit(const Positions& positions, double inflation = 0.0);

  // Every pair of leaves with overlapping volumes, inside each piece and between pieces.
  // With cull, self tests of cullable nodes are skipped; it never loses an intersecting pair.
  // Parallel (OpenMP), with a result that does not depend on the thread count.
  Candidates find_candidates(bool cull) const;
  // The same into `result`, whose vectors (and the buffers) keep their memory between calls.
  void find_candidates(bool cull, Candidates& result, CandidateBuffers& buffers) const;

  const std::vector<BvhNode>& nodes() const { return nodes_; }
  // Node n's volume (inflated by inflation()), containing every corner of its leaves.
  const Kdop18f& volume(Index n) const { return traversal_nodes_[n].volume; }
  std::span<const Index> roots() const { return roots_; }  // one per piece
  const ClothMesh& mesh() const { return *mesh_; }
  double inflation() const { return inflation_; }
  // A node's region is a topological disk (one border loop, V - E + F = 1): only those may be
  // culled. Its border edges (ClothMesh::edges indices) are listed for disks only, in the order
  // of the loop.
  bool node_is_disk(Index node) const { return node_is_disk_[node] != 0; }
  std::span<const Index> node_border_edges(Index node) const { return node_border_edges_[node]; }
  // The distinct corners of a leaf (its triangles share an edge: 3 or 4), the first repeated
  // where there are 3, so that whole leaves compare in one step.
  const std::array<Index, 4>& leaf_corners(Index leaf) const { return leaf_corners_[leaf]; }

 private:
  struct BuildContext;  // what every node's split reads (bvh_build.cpp)
  // Builds the subtree of leaf_ids[begin, end) into nodes_[index, index + 2 (end - begin) - 1),
  // with its volumes and cones (refit_node) once its children are done.
  void build_node(Index index, std::vector<Index>& leaf_ids, std::size_t begin, std::size_t end,
                  Index parent, Index piece, BuildContext& context);
  // top_nodes_ and subtree_roots_ below node n at depth `depth`, in pre-order.
  void collect_split(Index n, std::size_t depth);
  void find_disks();
  void refit_leaf(Index n, const Positions& positions, double inflation);
  // Node n's volume (in its BvhTraversalNode) and cone: a leaf's from the positions, an inner
  // node's from its children's.
  void refit_node(Index n, const Positions& positions, double inflation);
  // The culling flag of every node, top-down (the volumes and cones are current).
  void update_culling(const Positions& positions);
  struct SweepKey;       // a border segment's u range (bvh.cpp)
  struct BorderScratch;  // the projected loop (bvh.cpp)
  bool border_is_simple_in_projection(Index node, const Positions& positions,
                                      BorderScratch& scratch) const;

  const ClothMesh* mesh_;
  std::vector<BvhNode> nodes_;                     // children after their parent (pre-order)
  std::vector<BvhTraversalNode> traversal_nodes_;  // the same order
  std::vector<Index> roots_;
  std::vector<Index> subtree_end_;    // the subtree of node n is [n, subtree_end_[n])
  std::vector<Index> top_nodes_;      // nodes above the parallel split depth, pre-order
  std::vector<Index> subtree_roots_;  // nodes at the split depth: refit in parallel
  double inflation_ = 0;
  // Border edges of each node's region (precomputed at build; the region of a node is the set
  // of its leaves' triangles), for the projected-border test. Only for disk-like regions, in
  // the order of their loop.
  Adjacency node_border_edges_;
  // Beside each of those edges: the loop corner it starts at, and whether that corner is its
  // vertices[1] (the loop runs against the edge's own order).
  struct BorderCorner {
    Index vertex;
    std::uint8_t reversed;
  };
  std::vector<BorderCorner> border_corners_;
  std::vector<std::uint8_t> node_is_disk_;
  std::vector<std::array<Index, 4>> leaf_corners_;
  // Per leaf, its second triangle's corners as slots of leaf_corners_ (2 bits each, in the
  // triangle's order), or kLoneTriangle.
  static constexpr std::uint8_t kLoneTriangle = 0xFF;
  std::vector<std::uint8_t> leaf_second_;
};

}  // namespace untangle
