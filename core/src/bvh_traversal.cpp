// The BVH's pair traversal: the self test of each tree with normal-cone culling and the tests
// between trees, unrolled into a fixed task list and run in parallel.
#include <omp.h>

#include <algorithm>
#include <utility>

#include "bvh_internal.hpp"
#include "parallel_errors.hpp"

namespace untangle {

namespace {

// The self traversal is unrolled into at least this many independent tasks before the parallel
// loop. A constant (not the thread count), so the task list and the output order never depend
// on how many threads run them.
constexpr std::size_t kTargetTasks = 256;

struct Task {
  Index a, b;  // a == b: the self test of node a; else the pair test of nodes a and b
};

class Traversal {
 public:
  Traversal(const std::vector<BvhNode>& nodes, const std::vector<BvhTraversalNode>& packed,
            bool cull)
      : nodes_(nodes), packed_(packed), cull_(cull) {}

  void self(Index n, std::vector<LeafPair>& pairs, std::vector<Index>& culled) const {
    const BvhNode& node = nodes_[n];
    if (node.is_leaf()) return;  // the triangles of one leaf share an edge: never a pair
    if (cull_ && node.cullable) {
      culled.push_back(n);
      return;
    }
    self(node.left, pairs, culled);
    self(node.right, pairs, culled);
    pair(node.left, node.right, pairs);
  }

  void pair(Index a, Index b, std::vector<LeafPair>& pairs) const {
    if (packed_[a].volume.overlaps(packed_[b].volume)) overlapping_pair(a, b, pairs);
  }

  // a and b overlap. The children are tested before descending (a call per overlapping child
  // pair only), the second overlapping child pair by looping: the same order as plain recursion.
  void overlapping_pair(Index a, Index b, std::vector<LeafPair>& pairs) const {
    for (;;) {
      const BvhTraversalNode& na = packed_[a];
      const BvhTraversalNode& nb = packed_[b];
      if (na.is_leaf() && nb.is_leaf()) {
        pairs.push_back({std::min(na.leaf, nb.leaf), std::max(na.leaf, nb.leaf)});
        return;
      }
      Index a1 = a, b1 = b, a2 = a, b2 = b;
      if (descend_first(na, nb)) {
        a1 = na.left;
        a2 = na.right;
      } else {
        b1 = nb.left;
        b2 = nb.right;
      }
      const bool first = packed_[a1].volume.overlaps(packed_[b1].volume);
      const bool second = packed_[a2].volume.overlaps(packed_[b2].volume);
      if (first && second) {
        // Most such pairs are two leaves: pushed here without a call.
        const BvhTraversalNode& n1 = packed_[a1];
        const BvhTraversalNode& m1 = packed_[b1];
        if (n1.is_leaf() && m1.is_leaf()) {
          pairs.push_back({std::min(n1.leaf, m1.leaf), std::max(n1.leaf, m1.leaf)});
        } else {
          overlapping_pair(a1, b1, pairs);
        }
      }
      if (second) {
        a = a2;
        b = b2;
      } else if (first) {
        a = a1;
        b = b1;
      } else {
        return;
      }
    }
  }

  // One level of the recursion as tasks: children tasks go to `out`, finished work to the
  // outputs.
  void expand(const Task& task, std::vector<Task>& out, std::vector<LeafPair>& pairs,
              std::vector<Index>& culled) const {
    if (task.a == task.b) {
      const BvhNode& node = nodes_[task.a];
      if (node.is_leaf()) return;
      if (cull_ && node.cullable) {
        culled.push_back(task.a);
        return;
      }
      out.push_back({node.left, node.left});
      out.push_back({node.right, node.right});
      out.push_back({node.left, node.right});
      return;
    }
    const BvhTraversalNode& na = packed_[task.a];
    const BvhTraversalNode& nb = packed_[task.b];
    if (!na.volume.overlaps(nb.volume)) return;
    if (na.is_leaf() && nb.is_leaf()) {
      pairs.push_back({std::min(na.leaf, nb.leaf), std::max(na.leaf, nb.leaf)});
      return;
    }
    if (descend_first(na, nb)) {
      out.push_back({na.left, task.b});
      out.push_back({na.right, task.b});
    } else {
      out.push_back({task.a, nb.left});
      out.push_back({task.a, nb.right});
    }
  }

  void run(const Task& task, std::vector<LeafPair>& pairs, std::vector<Index>& culled) const {
    if (task.a == task.b) {
      self(task.a, pairs, culled);
    } else {
      pair(task.a, task.b, pairs);
    }
  }

 private:
  // Descend the bigger volume, so both sides shrink at the same pace.
  static bool descend_first(const BvhTraversalNode& a, const BvhTraversalNode& b) {
    if (b.is_leaf()) return true;
    if (a.is_leaf()) return false;
    return a.size >= b.size;
  }

  const std::vector<BvhNode>& nodes_;
  const std::vector<BvhTraversalNode>& packed_;
  bool cull_;
};

}  // namespace

Candidates Bvh::find_candidates(bool cull) const {
  Candidates result;
  CandidateBuffers buffers;
  find_candidates(cull, result, buffers);
  return result;
}

void Bvh::find_candidates(bool cull, Candidates& result, CandidateBuffers& buffers) const {
  const Traversal traversal(nodes_, traversal_nodes_, cull);
  // List 0 holds what the unrolling below finds itself, list i + 1 what task i finds.
  auto& pairs = buffers.pairs;
  auto& culled = buffers.culled;
  pairs.resize(std::max<std::size_t>(pairs.size(), 1));
  culled.resize(std::max<std::size_t>(culled.size(), 1));
  pairs[0].clear();
  culled[0].clear();
  std::vector<Task> tasks;
  for (Index root : roots_) {
    if (root != kNoIndex) tasks.push_back({root, root});
  }
  for (std::size_t p = 0; p < roots_.size(); ++p) {
    for (std::size_t q = p + 1; q < roots_.size(); ++q) {
      if (roots_[p] != kNoIndex && roots_[q] != kNoIndex) tasks.push_back({roots_[p], roots_[q]});
    }
  }
  // Breadth-first unrolling, sequential and independent of the thread count. Every expansion
  // finishes a task or replaces it by its children, so this ends on a finite tree.
  while (!tasks.empty() && tasks.size() < kTargetTasks) {
    std::vector<Task> next;
    next.reserve(3 * tasks.size());
    for (const Task& task : tasks) traversal.expand(task, next, pairs[0], culled[0]);
    tasks = std::move(next);
  }
  const std::size_t lists = tasks.size() + 1;
  pairs.resize(lists);
  culled.resize(lists);
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    errors.run([&] {
      pairs[i + 1].clear();
      culled[i + 1].clear();
      traversal.run(tasks[i], pairs[i + 1], culled[i + 1]);
    });
  }
  errors.rethrow();
  // Concatenated in list order, each list copied by its own thread. The caller's vectors are
  // reused: a resize to about last frame's size writes little, where fresh ones would be
  // written (and faulted in) whole, on one thread.
  std::vector<std::size_t> pair_offset(lists + 1, 0), culled_offset(lists + 1, 0);
  for (std::size_t i = 0; i < lists; ++i) {
    pair_offset[i + 1] = pair_offset[i] + pairs[i].size();
    culled_offset[i + 1] = culled_offset[i] + culled[i].size();
  }
  result.leaf_pairs.resize(pair_offset.back());
  result.culled_nodes.resize(culled_offset.back());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < lists; ++i) {
    std::copy(pairs[i].begin(), pairs[i].end(),
              result.leaf_pairs.begin() + static_cast<std::ptrdiff_t>(pair_offset[i]));
    std::copy(culled[i].begin(), culled[i].end(),
              result.culled_nodes.begin() + static_cast<std::ptrdiff_t>(culled_offset[i]));
  }
}

}  // namespace untangle
