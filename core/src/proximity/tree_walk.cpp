// The search's own walk of the BVH's trees: its volumes refit to the positions and inflated, and
// the leaf pairs whose volumes overlap, found in parallel.
#include <omp.h>

#include "../parallel_errors.hpp"
#include "internal.hpp"

namespace untangle {

using proximity_detail::kParallelLeaves;
using proximity_detail::kParallelTasks;
using proximity_detail::kTargetTasks;

Kdop18f ProximitySearch::leaf_volume(Index leaf, const Positions& x, double inflation) const {
  Kdop18 volume;
  const LeafParts& parts = parts_[leaf];
  for (int i = 0; i < parts.vertex_count; ++i) {
    volume.add(x[parts.vertices[i]]);
    if (from_ != nullptr) volume.add((*from_)[parts.vertices[i]]);
  }
  volume.inflate(inflation);
  return Kdop18f(volume);
}

void ProximitySearch::refit(const Positions& x, double inflation) {
  const auto leaf_count = static_cast<std::ptrdiff_t>(leaf_nodes_.size());
#pragma omp parallel for schedule(static) if (leaf_count >= kParallelLeaves)
  for (std::ptrdiff_t k = 0; k < leaf_count; ++k) {
    const Index n = leaf_nodes_[k];
    volumes_[n] = leaf_volume(nodes_[n].leaf, x, inflation);
  }
  // Children come after their parent, so a backward sweep meets them first.
  for (std::size_t n = nodes_.size(); n-- > 0;) {
    const Node& node = nodes_[n];
    if (node.leaf != kNoIndex) continue;
    volumes_[n] = volumes_[node.left];
    volumes_[n].merge(volumes_[node.right]);
  }
}

// The children of a node pair to test next: both sides are split while both can be, which
// visits fewer node pairs than splitting one side at a time.
template <typename Visit>
void ProximitySearch::children(Task task, Visit&& visit) const {
  const Node& a = nodes_[task.a];
  if (task.a == task.b) {
    if (a.leaf != kNoIndex) return;
    // A leaf is not paired with itself: its points and edges are all neighbours.
    if (nodes_[a.left].leaf == kNoIndex) visit(Task{a.left, a.left});
    if (nodes_[a.right].leaf == kNoIndex) visit(Task{a.right, a.right});
    visit(Task{a.left, a.right});
    return;
  }
  if (!volumes_[task.a].overlaps(volumes_[task.b])) return;
  const Node& b = nodes_[task.b];
  if (a.leaf != kNoIndex && b.leaf != kNoIndex) {
    visit(Task{kNoIndex, kNoIndex});  // the leaf pair itself
  } else if (a.leaf != kNoIndex) {
    visit(Task{task.a, b.left});
    visit(Task{task.a, b.right});
  } else if (b.leaf != kNoIndex) {
    visit(Task{a.left, task.b});
    visit(Task{a.right, task.b});
  } else {
    visit(Task{a.left, b.left});
    visit(Task{a.left, b.right});
    visit(Task{a.right, b.left});
    visit(Task{a.right, b.right});
  }
}

void ProximitySearch::run(Task task, std::vector<CloseLeafPair>& out) const {
  children(task, [&](Task child) {
    if (child.a == kNoIndex) {
      const Index a = nodes_[task.a].leaf, b = nodes_[task.b].leaf;
      out.push_back({std::min(a, b), std::max(a, b)});
    } else {
      run(child, out);
    }
  });
}

void ProximitySearch::find_leaf_pairs(const Positions& x, double inflation) {
  refit(x, inflation);
  // The top of the trees unrolled breadth-first into tasks, the same on any thread count.
  const auto roots = bvh_->roots();
  tasks_.clear();
  for (std::size_t p = 0; p < roots.size(); ++p) {
    if (roots[p] == kNoIndex) continue;
    tasks_.push_back({roots[p], roots[p]});
    for (std::size_t q = p + 1; q < roots.size(); ++q) {
      if (roots[q] != kNoIndex) tasks_.push_back({roots[p], roots[q]});
    }
  }
  for (int round = 0; round < 8 && tasks_.size() < kTargetTasks; ++round) {
    next_tasks_.clear();
    for (const Task& task : tasks_) {
      children(task,
               [&](Task child) { next_tasks_.push_back(child.a == kNoIndex ? task : child); });
    }
    tasks_.swap(next_tasks_);
  }
  thread_leaf_pairs_.resize(static_cast<std::size_t>(std::max(1, omp_get_max_threads())));
  for (std::vector<CloseLeafPair>& pairs : thread_leaf_pairs_) pairs.clear();
  const auto task_count = static_cast<std::ptrdiff_t>(tasks_.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1) if (tasks_.size() >= kParallelTasks)
  for (std::ptrdiff_t k = 0; k < task_count; ++k) {
    errors.run([&] {
      run(tasks_[k], thread_leaf_pairs_[static_cast<std::size_t>(omp_get_thread_num())]);
    });
  }
  errors.rethrow();
  // In whatever order the threads found them: the pairs found in them are sorted at the end.
  leaf_pairs_.clear();
  for (const std::vector<CloseLeafPair>& pairs : thread_leaf_pairs_) {
    leaf_pairs_.insert(leaf_pairs_.end(), pairs.begin(), pairs.end());
  }
}

}  // namespace untangle
