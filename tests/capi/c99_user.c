/* A plain C99 user of libuntangle: builds a two-piece scene (two crossing quad sheets), runs a
 * few frames and reads the results back. Exits non-zero on any unexpected status, so the test
 * guards that the header is enough for C and that the basic call sequence works from C. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "untangle.h"

#define N 6 /* vertices per side of each sheet */

static int check(UtStatus status, const char* what) {
  if (status != UT_OK) {
    fprintf(stderr, "%s failed: %s (%s)\n", what, ut_status_name(status), ut_last_error());
    return 0;
  }
  return 1;
}

static void sheet(float* positions, uint32_t* sizes, uint32_t* indices, int vertical) {
  int i, j, f = 0;
  for (j = 0; j < N; ++j) {
    for (i = 0; i < N; ++i) {
      float* p = positions + 3 * (j * N + i);
      float u = -1.0f + 2.0f * (float)i / (N - 1), v = -1.0f + 2.0f * (float)j / (N - 1);
      p[0] = vertical ? 0.05f : u;
      p[1] = vertical ? 0.55f * u : v;
      p[2] = vertical ? v + 0.03f : 0.0f;
    }
  }
  for (j = 0; j + 1 < N; ++j) {
    for (i = 0; i + 1 < N; ++i, ++f) {
      sizes[f] = 4;
      indices[4 * f + 0] = (uint32_t)(j * N + i);
      indices[4 * f + 1] = (uint32_t)(j * N + i + 1);
      indices[4 * f + 2] = (uint32_t)((j + 1) * N + i + 1);
      indices[4 * f + 3] = (uint32_t)((j + 1) * N + i);
    }
  }
}

int main(void) {
  float positions[2][3 * N * N], out[3 * 2 * N * N];
  uint32_t sizes[(N - 1) * (N - 1)], indices[4 * (N - 1) * (N - 1)];
  UtScene* scene = NULL;
  UtWorld* world = NULL;
  UtSettings settings;
  UtFrameStats stats;
  size_t count = 0, v;
  int ok = 1;

  if ((ut_abi_version() >> 16) != UT_ABI_VERSION_MAJOR) return 1;
  ok = ok && check(ut_scene_create(&scene), "ut_scene_create");
  sheet(positions[0], sizes, indices, 0);
  ok = ok && check(ut_scene_add_piece(scene, positions[0], N * N, 0, sizes, (N - 1) * (N - 1),
                                      indices, 4 * (N - 1) * (N - 1), NULL),
                   "add piece 0");
  sheet(positions[1], sizes, indices, 1);
  ok = ok && check(ut_scene_add_piece(scene, positions[1], N * N, 0, sizes, (N - 1) * (N - 1),
                                      indices, 4 * (N - 1) * (N - 1), NULL),
                   "add piece 1");
  ok = ok && check(ut_settings_init(&settings, sizeof settings), "ut_settings_init");
  settings.gravity[2] = 0.0;
  ok = ok && check(ut_world_create(scene, &settings, &world), "ut_world_create");
  ut_scene_destroy(scene);
  ok = ok && check(ut_world_detect(world), "ut_world_detect");
  stats.struct_size = sizeof stats;
  ok = ok && check(ut_world_stats(world, &stats), "ut_world_stats");
  if (ok && stats.pairs == 0) {
    fprintf(stderr, "the crossing sheets should intersect\n");
    ok = 0;
  }
  ok = ok && check(ut_world_step(world, 3), "ut_world_step");
  ok = ok && check(ut_world_vertex_count(world, UT_ALL_PIECES, &count), "ut_world_vertex_count");
  if (ok && count != 2 * N * N) ok = 0;
  ok = ok && check(ut_world_get_positions(world, UT_ALL_PIECES, out, count, 0), "get positions");
  for (v = 0; ok && v < 3 * count; ++v) {
    if (!isfinite(out[v])) ok = 0;
  }
  ut_world_destroy(world);
  ut_world_destroy(NULL);
  ut_scene_destroy(NULL);
  printf("%s\n", ok ? "c99 user: ok" : "c99 user: FAILED");
  return ok ? 0 : 1;
}
