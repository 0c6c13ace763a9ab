// IcmResponse: Intersection Contour Minimization (Volino & Magnenat-Thalmann 2006, sections 3-4;
// refined gradient of Ye & Zhao 2012). Each edge-triangle hit of a contour gets the direction in
// which its edge must move relative to the triangle to shorten the contour; the directions summed
// over the contour, with a sign per side, give one displacement per contour, spread over the
// particles of both sides. Contours that stop shrinking (SPEC "known limits") are reported.
#pragma once

#include <map>

#include "untangle/response.hpp"

namespace untangle {

struct IcmOptions {
  // Weight of the normal term of the hit gradient: 1 in Volino 2006, 2 in Ye & Zhao 2012. 2 is
  // kept: it leaves fewer pairs on the scenes than 1, and the tangled start stays clean only
  // with 2.
  double normal_term = 2.0;
  double g0 = 4.0;  // H = h0 D / sqrt(|D|^2 + g0^2) (SPEC)
  // A contour whose length has not dropped by shrink_fraction for this many frames is stuck.
  int stuck_frames = 30;
  double shrink_fraction = 0.02;
  // A stuck contour (a dead end, SPEC "known limits") gets a push that fades out, so a scene
  // does not push forever. The untangler turns this off: it raises the push of a stalled solve.
  bool fade_stuck_contours = true;
};

// The descent direction of the contour length for the edge of `hit` moved relative to its
// triangle: sum over the edge's triangles T_i of R_i - normal_term (E.R_i)/(E.N) N, R_i the unit
// direction of the contour inside T_i, away from the edge. Zero where E is nearly in the plane.
Vec3 hit_gradient(const ClothMesh& mesh, const Positions& positions, const Hit& hit,
                  double normal_term);

// D of one contour: how side 0 must move relative to side 1 (the sum of the hit gradients, each
// with the sign of the side its edge is on).
Vec3 contour_gradient(const ClothMesh& mesh, const Positions& positions,
                      const Intersections& intersections, const Contour& contour,
                      double normal_term);

// One particle's share of a response, before the per-particle average.
struct ParticlePush {
  Index particle;
  Vec3 delta;
  double weight;  // closeness to the hit (barycentric), the weight of the per-particle average
};

// Moves the point of `hit` on its edge by +edge_move and the point on its triangle by
// -edge_move: each side as an inverse-mass weighted projection over its corners (edge: 1 - t and
// t; triangle: barycentrics), so pinned particles (inverse mass 0) never move. Appends the pushes.
void push_hit(const ClothMesh& mesh, const std::vector<double>& inverse_mass, const Hit& hit,
              const Vec3& edge_move, std::vector<ParticlePush>& out);

// The weighted per-particle average of `pushes`, in a Displacement of `particle_count` entries.
Positions average_pushes(std::size_t particle_count, const std::vector<ParticlePush>& pushes);

// The particles of every hit's edge and triangle and their polygon rings.
std::vector<std::uint8_t> particles_near_contours(const ClothMesh& mesh,
                                                  const Intersections& intersections);

class IcmResponse : public Response {
 public:
  IcmResponse() = default;
  explicit IcmResponse(const IcmOptions& options) : options_(options) {}

  Displacement compute(const ResponseInput& input) override;

 private:
  // A contour followed across frames: matched to the previous frame's contour with which it
  // shares the most triangles, since its hits change as it moves.
  struct Track {
    double best_length = 0;
    int frames_without_shrinking = 0;
  };
  std::vector<Track> track_contours(const Contours& contours,
                                    const std::vector<std::vector<Index>>& triangles);

  IcmOptions options_;
  std::vector<Track> tracks_;              // previous frame's contours, in their order
  std::map<Index, Index> triangle_track_;  // triangle -> previous contour that crossed it
};

}  // namespace untangle
