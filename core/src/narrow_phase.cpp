#include "untangle/narrow_phase.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

#include "narrow_phase/bucket_sort.hpp"
#include "narrow_phase/filters.hpp"
#include "narrow_phase/frames.hpp"
#include "narrow_phase/interval.hpp"
#include "narrow_phase/moller_trumbore.hpp"
#include "parallel_errors.hpp"

namespace untangle {

namespace {

using namespace narrow;

// Candidate leaf pairs per parallel block. A constant, so the blocks (and the order in which
// their outputs are concatenated) do not depend on the thread count.
constexpr std::size_t kBlockSize = 256;

std::uint64_t hit_key(Index edge, Index triangle) {
  return (static_cast<std::uint64_t>(edge) << 32) | triangle;
}

// A hit as a block keeps it: the point and the third barycentric follow when the hit is written
// out, by the expressions Moller-Trumbore uses (the same bits), so a third of the memory moves.
struct RawHit {
  std::uint64_t key;
  EdgeCrossing crossing;
};

struct PairRecord {
  Index a, b;
  std::uint32_t first;  // raw hits of this pair: [first, first + count)
  std::uint32_t count;
};

struct Block {
  std::size_t candidate_count = 0;  // triangle pairs the exact tests ran on
  std::vector<PairRecord> pairs;
  std::vector<RawHit> hits;
  std::vector<std::uint64_t> dropped;
};

// The three edges of `owner` (ClothMesh::triangle_edges[owner_index]) against `target`, but for
// those with both ends clearly on one side of the target's plane (`sides`, from corner_sides).
void edges_against(const ClothMesh& mesh, Index owner_index, const TriangleFrame& owner,
                   const std::array<Index, 3>& owner_vertices, const std::array<int, 3>& sides,
                   unsigned edges, Index target_index, const TriangleFrame& target, Block& block) {
  const auto& pt = target.corners;
  const double normal_squared = target.normal.squaredNorm();
  // Unrolled: the loop's index arithmetic ((k + 1) % 3, the corner swap) then folds away.
#pragma GCC unroll 3
  for (int k = 0; k < 3; ++k) {
    // Edge k joins corners k and k + 1; its canonical order (lower vertex first) makes the
    // result bit-identical whichever of its triangles it is tested from.
    int i = k, j = (k + 1) % 3;
    if ((edges & (1u << k)) == 0 || (sides[i] != 0 && sides[i] == sides[j])) continue;
    if (owner_vertices[i] > owner_vertices[j]) std::swap(i, j);
    EdgeCrossing hit;
    const EdgeTriangleResult r = moller_trumbore(owner.corners[i], owner.corners[j], pt[0], pt[1],
                                                 pt[2], normal_squared, hit);
    if (r == EdgeTriangleResult::kNone) continue;
    const Index e = mesh.triangle_edges[owner_index][k];
    if (r == EdgeTriangleResult::kHit) {
      block.hits.push_back({hit_key(e, target_index), hit});
    } else {
      block.dropped.push_back(hit_key(e, target_index));
    }
  }
}

void test_triangle_pair(const ClothMesh& mesh, const TriangleFrames& frames, Index ta, Index tb,
                        Block& block) {
  const TriangleFrame& fa = frames[ta];
  const TriangleFrame& fb = frames[tb];
  if (ball_on_one_side(fb, fa) || ball_on_one_side(fa, fb)) return;
  // Both directions are needed: a side test of A against B's plane says nothing about the
  // edges of B once A reaches that plane.
  const CornerSides a_sides = corner_sides(fb, fa);
  if (all_on_one_side(a_sides.side)) return;
  const CornerSides b_sides = corner_sides(fa, fb);
  if (all_on_one_side(b_sides.side)) return;
  const std::array<unsigned, 2> edges = edges_to_test(fa, a_sides, fb, b_sides);
  if ((edges[0] | edges[1]) == 0) return;
  const std::uint32_t first = static_cast<std::uint32_t>(block.hits.size());
  edges_against(mesh, ta, fa, mesh.triangles[ta], a_sides.side, edges[0], tb, fb, block);
  edges_against(mesh, tb, fb, mesh.triangles[tb], b_sides.side, edges[1], ta, fa, block);
  const auto count = static_cast<std::uint32_t>(block.hits.size()) - first;
  if (count > 0) block.pairs.push_back({std::min(ta, tb), std::max(ta, tb), first, count});
}

// The candidate triangle pairs of leaf pairs [bi kBlockSize, (bi + 1) kBlockSize) and their
// exact tests, into `block`. Out of line: inlined into the caller's error-catching lambda, its
// loops came out 2 % slower (GCC 12).
[[gnu::noinline]] void test_block(const ClothMesh& mesh, const Bvh& bvh, const LeafBoxList& boxes,
                                  const TriangleFrames& frames,
                                  const std::vector<LeafPair>& leaf_pairs, std::size_t bi,
                                  std::vector<std::array<Index, 2>>& candidates, Block& block) {
  block.pairs.clear();
  block.hits.clear();
  block.dropped.clear();
  // The triangle pairs live only until the block's tests are done: one list per thread (not
  // per block) holds them, so a first frame touches no memory for them block after block.
  candidates.clear();
  // The cheap tests over the whole block first, then the exact ones: two tight loops instead
  // of one that mixes them (and reloads the mesh's arrays after every stored hit).
  const Leaf* leaves = mesh.leaves.data();
  const std::array<Index, 3>* triangles = mesh.triangles.data();
  const std::size_t end = std::min(leaf_pairs.size(), (bi + 1) * kBlockSize);
  for (std::size_t i = bi * kBlockSize; i < end; ++i) {
    const auto [a, b] = leaf_pairs[i];
    unsigned mask = overlap_mask(boxes[a], boxes[b]);
    if (mask == 0) continue;
    // Most leaf pairs are not neighbours: one test of their corners spares a vertex test per
    // triangle pair.
    const bool neighbours = leaves_share_corner(bvh.leaf_corners(a), bvh.leaf_corners(b));
    // In the order (triangle 0 of a, 0 of b), (0, 1), (1, 0), (1, 1).
    for (; mask != 0; mask &= mask - 1) {
      const int bit = std::countr_zero(mask);
      const Index ta = leaves[a][bit >> 1];
      const Index tb = leaves[b][bit & 1];
      // Triangles that share a vertex have it in both boxes: the cheaper box test first.
      if (!neighbours || !share_vertex(triangles[ta], triangles[tb])) {
        candidates.push_back({ta, tb});
      }
    }
  }
  block.candidate_count = candidates.size();
  // For the exact tests' outputs, what dense tangles need: a first frame then grows no list
  // step by step.
  block.hits.reserve(candidates.size() / 2);
  block.pairs.reserve(candidates.size() / 4);
  // The two frames of a candidate are far apart in memory on a large mesh: fetched a few
  // candidates ahead, they arrive while the tests before them run.
  constexpr std::size_t kPrefetchAhead = 6;
  const std::size_t count = candidates.size();
  for (std::size_t i = 0; i < count; ++i) {
    if (i + kPrefetchAhead < count) {
      prefetch(frames[candidates[i + kPrefetchAhead][0]]);
      prefetch(frames[candidates[i + kPrefetchAhead][1]]);
    }
    test_triangle_pair(mesh, frames, candidates[i][0], candidates[i][1], block);
  }
}

struct HitRef {
  std::uint64_t key;
  std::uint32_t block, index;  // blocks[block].hits[index]
};

}  // namespace

struct NarrowPhaseBuffers::Storage {
  Candidates candidates;
  CandidateBuffers candidate_buffers;
  LeafBoxList boxes;                      // per leaf
  std::vector<std::uint8_t> used_leaves;  // per leaf: in a candidate pair
  TriangleFrames frames;
  std::vector<Block> blocks;  // cleared, not freed, between calls
  // The gather's lists: every entry up to their size is written each call.
  std::vector<std::uint32_t> hit_offset, pair_offset, dropped_offset;
  std::vector<HitRef> refs, order;
  std::vector<PairRecord> records, sorted_records;
  std::vector<std::uint64_t> dropped;
  std::vector<Index> rank, kept;
  std::vector<std::uint8_t> is_segment;
  std::vector<std::array<Index, 2>> segment_hits;
  std::vector<std::uint32_t> bucket_begin;
};

NarrowPhaseBuffers::NarrowPhaseBuffers() : storage(std::make_unique<Storage>()) {}
NarrowPhaseBuffers::~NarrowPhaseBuffers() = default;
NarrowPhaseBuffers::NarrowPhaseBuffers(NarrowPhaseBuffers&&) noexcept = default;
NarrowPhaseBuffers& NarrowPhaseBuffers::operator=(NarrowPhaseBuffers&&) noexcept = default;

Intersections find_intersections(const ClothMesh& mesh, const Bvh& bvh, const Positions& positions,
                                 const DetectOptions& options, NarrowPhaseBuffers* buffers) {
  Intersections out;
  find_intersections(mesh, bvh, positions, options, buffers, out);
  return out;
}

void find_intersections(const ClothMesh& mesh, const Bvh& bvh, const Positions& positions,
                        const DetectOptions& options, NarrowPhaseBuffers* buffers,
                        Intersections& out) {
  if (positions.size() != mesh.vertex_count()) {
    throw std::invalid_argument("find_intersections: " + std::to_string(positions.size()) +
                                " positions given for a mesh of " +
                                std::to_string(mesh.vertex_count()) + " vertices");
  }
  if (&bvh.mesh() != &mesh) {
    throw std::invalid_argument("find_intersections: the BVH was built for another mesh");
  }
  NarrowPhaseBuffers own_buffers;
  NarrowPhaseBuffers::Storage& storage = *(buffers != nullptr ? buffers : &own_buffers)->storage;
  out.dropped_hits = 0;
  out.candidate_pairs = 0;
  const double t0 = omp_get_wtime();
  Candidates& candidates = storage.candidates;
  bvh.find_candidates(options.cull, candidates, storage.candidate_buffers);
  const double t1 = omp_get_wtime();
  out.broad_seconds = t1 - t0;
  out.culled_nodes = candidates.culled_nodes;

  // Every box and the frame of every detectable triangle are written below: a resize to the
  // same size touches nothing.
  LeafBoxList& boxes = storage.boxes;
  TriangleFrames& frames = storage.frames;
  boxes.resize(mesh.leaves.size());
  frames.resize(mesh.triangles.size());
  const auto leaf_count = static_cast<std::ptrdiff_t>(mesh.leaves.size());
  const auto& leaf_pairs = candidates.leaf_pairs;
  // Only the leaves of a candidate pair are read below. Where those pairs are few (fewer than two
  // per leaf: a state that is clean or nearly, mostly culled, as the untangler's checks are),
  // only their leaves are prepared; marking costs less than the frames it saves.
  const bool few_pairs = leaf_pairs.size() < 2 * mesh.leaves.size();
  std::vector<std::uint8_t>& used = storage.used_leaves;
  if (few_pairs) {
    used.assign(mesh.leaves.size(), 0);
    for (const auto& [a, b] : leaf_pairs) used[a] = used[b] = 1;
  }
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t l = 0; l < leaf_count; ++l) {
    if (!few_pairs || used[l])
      leaf_frames(mesh, positions, static_cast<Index>(l), boxes[l], frames);
  }

  const std::size_t block_count = (leaf_pairs.size() + kBlockSize - 1) / kBlockSize;
  std::vector<Block>& blocks = storage.blocks;
  if (blocks.size() < block_count) blocks.resize(block_count);
  ParallelErrors errors;
#pragma omp parallel
  {
    std::vector<std::array<Index, 2>> triangle_pairs;
    // Room for the most a block can hold: four triangle pairs per leaf pair.
    errors.run([&] { triangle_pairs.reserve(4 * kBlockSize); });
#pragma omp for schedule(dynamic, 1)
    for (std::size_t bi = 0; bi < block_count; ++bi) {
      errors.run([&] {
        test_block(mesh, bvh, boxes, frames, leaf_pairs, bi, triangle_pairs, blocks[bi]);
      });
    }
  }
  errors.rethrow();

  // Gather in block order. The hits stay in their blocks: only a 16-byte reference per hit
  // moves through the sort (copying every hit again costs more than the sort on large meshes).
  std::vector<std::uint32_t>& hit_offset = storage.hit_offset;
  std::vector<std::uint32_t>& pair_offset = storage.pair_offset;
  std::vector<std::uint32_t>& dropped_offset = storage.dropped_offset;
  hit_offset.assign(block_count + 1, 0);
  pair_offset.assign(block_count + 1, 0);
  dropped_offset.assign(block_count + 1, 0);
  for (std::size_t bi = 0; bi < block_count; ++bi) {
    hit_offset[bi + 1] = hit_offset[bi] + static_cast<std::uint32_t>(blocks[bi].hits.size());
    pair_offset[bi + 1] = pair_offset[bi] + static_cast<std::uint32_t>(blocks[bi].pairs.size());
    dropped_offset[bi + 1] =
        dropped_offset[bi] + static_cast<std::uint32_t>(blocks[bi].dropped.size());
    out.candidate_pairs += blocks[bi].candidate_count;
  }
  std::vector<HitRef>& refs = storage.refs;
  std::vector<PairRecord>& records = storage.records;
  std::vector<std::uint64_t>& dropped = storage.dropped;
  refs.resize(hit_offset.back());
  records.resize(pair_offset.back());
  dropped.resize(dropped_offset.back());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t bi = 0; bi < block_count; ++bi) {
    const Block& block = blocks[bi];
    for (std::uint32_t k = 0; k < block.hits.size(); ++k) {
      refs[hit_offset[bi] + k] = {block.hits[k].key, static_cast<std::uint32_t>(bi), k};
    }
    std::copy(block.dropped.begin(), block.dropped.end(), dropped.begin() + dropped_offset[bi]);
    for (std::size_t k = 0; k < block.pairs.size(); ++k) {
      PairRecord r = block.pairs[k];
      r.first += hit_offset[bi];  // global raw hit index
      records[pair_offset[bi] + k] = r;
    }
  }
  std::sort(dropped.begin(), dropped.end());
  dropped.erase(std::unique(dropped.begin(), dropped.end()), dropped.end());
  out.dropped_hits = dropped.size();
  out.dropped_edges.clear();
  for (std::uint64_t key : dropped) {  // sorted by edge first: each edge's keys are adjacent
    const auto edge = static_cast<Index>(key >> 32);
    if (out.dropped_edges.empty() || out.dropped_edges.back() != edge) {
      out.dropped_edges.push_back(edge);
    }
  }

  // One hit per (edge, triangle): both copies are bit-identical, so keep the first. Each raw hit
  // learns the index of its kept copy, for the segments below.
  std::vector<HitRef>& order = storage.order;
  bucket_sort(
      refs, mesh.edges.size(), [](const HitRef& r) { return r.key >> 32; },
      [](const HitRef& x, const HitRef& y) {
        return x.key < y.key ||
               (x.key == y.key && (x.block < y.block || (x.block == y.block && x.index < y.index)));
      },
      order, storage.bucket_begin);
  const auto ordered = static_cast<std::ptrdiff_t>(order.size());
  std::vector<Index>& rank = storage.rank;  // 1 + the index of the hit's kept copy
  rank.resize(order.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < ordered; ++i) {
    rank[i] = i == 0 || order[i - 1].key != order[i].key ? 1 : 0;
  }
  std::inclusive_scan(rank.begin(), rank.end(), rank.begin());
  out.hits.resize(rank.empty() ? 0 : rank.back());
  std::vector<Index>& kept = storage.kept;
  kept.resize(refs.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < ordered; ++i) {
    const HitRef& r = order[i];
    if (i == 0 || rank[i - 1] != rank[i]) {
      const auto edge = static_cast<Index>(r.key >> 32);
      const auto& ends = mesh.edges[edge].vertices;
      out.hits[rank[i] - 1] =
          make_hit(positions[ends[0]], positions[ends[1]], edge, static_cast<Index>(r.key),
                   blocks[r.block].hits[r.index].crossing);
    }
    kept[hit_offset[r.block] + r.index] = rank[i] - 1;
  }
  std::vector<PairRecord>& sorted_records = storage.sorted_records;
  bucket_sort(
      records, mesh.triangles.size(), [](const PairRecord& r) { return r.a; },
      [](const PairRecord& x, const PairRecord& y) { return x.b < y.b; }, sorted_records,
      storage.bucket_begin);
  out.pairs.resize(sorted_records.size());
  std::vector<std::uint8_t>& is_segment = storage.is_segment;
  std::vector<std::array<Index, 2>>& segment_hits = storage.segment_hits;
  is_segment.resize(sorted_records.size());
  segment_hits.resize(sorted_records.size());
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < sorted_records.size(); ++i) {
    const PairRecord& r = sorted_records[i];
    out.pairs[i] = {r.a, r.b};
    is_segment[i] = r.count == 2 ? 1 : 0;
    if (r.count != 2) continue;
    std::array<Index, 2> h = {kept[r.first], kept[r.first + 1]};
    if (h[0] > h[1]) std::swap(h[0], h[1]);
    segment_hits[i] = h;
  }
  out.segments.clear();
  out.segments.reserve(sorted_records.size());
  for (std::size_t i = 0; i < sorted_records.size(); ++i) {
    if (is_segment[i]) {
      out.segments.push_back({{sorted_records[i].a, sorted_records[i].b}, segment_hits[i]});
    }
  }
  out.narrow_seconds = omp_get_wtime() - t1;
}

}  // namespace untangle
