/*
 * untangle.h: the plain C ABI of libuntangle, the cloth untangling engine (SPEC "The product
 * around the core"). C99, self-contained; nothing C++ crosses it. The Blender add-on (ctypes)
 * and the `untangle` CLI reach the engine only through these calls.
 *
 * Conventions, valid for every function below:
 * - Every call returns a UtStatus. On failure, ut_last_error() gives a readable message naming
 *   the problem, and the call has changed nothing: out-parameters are left as they were (except
 *   handles, which are set to NULL), worlds and scenes keep their state. No call aborts, throws
 *   or prints on bad input.
 * - Handles are opaque and created and destroyed in pairs (ut_scene_create / ut_scene_destroy,
 *   ut_world_create* / ut_world_destroy). Destroy accepts NULL. A handle may be used by one
 *   thread at a time; different handles may be used from different threads at once.
 * - Arrays belong to the caller. Positions are interleaved xyz `float` triples; where a call
 *   takes a byte stride, 0 means packed (12 bytes). Indices are uint32_t, counts size_t.
 * - Variable-sized outputs are "query the size, then fill": pass NULL arrays to get the counts,
 *   then call again with arrays of at least that capacity (a smaller capacity is refused with
 *   UT_ERROR_INVALID_ARGUMENT). Count out-parameters must not be NULL unless said otherwise.
 * - Structs that may grow start with `struct_size`, the caller's sizeof. A smaller (older)
 *   size is accepted: fields lying wholly inside it are read or written, the others take their
 *   defaults (on input) or are not written (on output). A size larger than this header's
 *   struct is refused with UT_ERROR_INVALID_ARGUMENT.
 * - Inside the engine every number is a double; the ABI converts at its edge. No NaN or
 *   infinity is ever written to an output array.
 */
#ifndef UNTANGLE_H
#define UNTANGLE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(UNTANGLE_BUILDING_LIBRARY)
#define UT_API __declspec(dllexport)
#else
#define UT_API __declspec(dllimport)
#endif
#else
#define UT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Version                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* A different major version is incompatible: callers must refuse it. A larger minor version
 * only adds functions or struct fields at the end. */
#define UT_ABI_VERSION_MAJOR 1
#define UT_ABI_VERSION_MINOR 4
#define UT_ABI_VERSION_PATCH 0

/* The version of the loaded library, packed as (major << 16) | (minor << 8) | patch. */
UT_API uint32_t ut_abi_version(void);

/* ---------------------------------------------------------------------------------------- */
/* Status and errors                                                                        */
/* ---------------------------------------------------------------------------------------- */

typedef enum UtStatus {
  UT_OK = 0,
  UT_ERROR_INVALID_ARGUMENT = 1,  /* NULL handle or array, wrong length, bad settings value */
  UT_ERROR_INVALID_MESH = 2,      /* index out of range, bad face, NaN/Inf position, ... */
  UT_ERROR_INVALID_OPERATION = 3, /* not allowed in the current state (grab_move without grab) */
  UT_ERROR_OUT_OF_MEMORY = 4,
  UT_ERROR_CANCELLED = 5, /* a progress callback returned 0; outputs hold the state
                             reached (see ut_untangle) */
  UT_ERROR_INTERNAL = 6   /* a bug in the engine; the message says where */
} UtStatus;

/* The message of the last failed call on the calling thread ("" if none failed yet). Valid
 * until the next failing call on this thread. Successful calls do not clear it. */
UT_API const char* ut_last_error(void);

/* A fixed name for a status code, e.g. "UT_ERROR_INVALID_MESH"; "UT_UNKNOWN" otherwise. */
UT_API const char* ut_status_name(int32_t status);

/* ---------------------------------------------------------------------------------------- */
/* Settings                                                                                 */
/* ---------------------------------------------------------------------------------------- */

typedef enum UtMethod {
  UT_METHOD_ICM = 0,     /* Volino & Magnenat-Thalmann 2006, intersection contour minimization */
  UT_METHOD_KIKUCHI = 1, /* Kikuchi & Kanai 2025, per-pair projected overlap depth */
  UT_METHOD_YE = 2,      /* Ye et al. 2017, by contour type */
  UT_METHOD_BUFFET = 3   /* Buffet et al. 2019, layer ordering between pieces */
} UtMethod;

/* Every switch of the frame pipeline and the untangler. Booleans are 0 or 1. The engine
 * validates the values (ranges are in the engine's message, e.g. "thickness must be in [0, 1000],
 * got -2") and refuses a bad value with UT_ERROR_INVALID_ARGUMENT. */
typedef struct UtSettings {
  uint32_t struct_size;      /* sizeof(UtSettings) of the caller */
  int32_t method;            /* UtMethod; default UT_METHOD_ICM */
  int32_t untangle;          /* untangling response on; default 1 */
  int32_t proximity;         /* proximity (thickness) constraints on; default 1 */
  int32_t cull;              /* normal-cone culling in the BVH self test; default 1 */
  int32_t iterations;        /* XPBD iterations per frame; default 10 */
  int32_t threads;           /* OpenMP threads for this world; 0 = the default (ut_set_threads) */
  int32_t reserved;          /* 0; keeps the doubles 8-byte aligned on every platform */
  double response_strength;  /* h0 = response_strength * spacing; default 1 */
  double thickness;          /* proximity distance in scene units; default 0.01 */
  double time_step;          /* seconds per frame; default 1/60 */
  double gravity[3];         /* m/s^2, z is up; default (0, 0, -9.81) */
  double friction;           /* Coulomb coefficient on spheres and ground; default 0.5 */
  double max_speed;          /* per-particle speed limit, m/s; default 10 */
  double stretch_compliance; /* XPBD compliance of edges; default 0 (stiff) */
  double bending_compliance; /* XPBD compliance of bending; default 1e-3 */
  double spacing;            /* particle spacing; 0 = the mesh's mean rest edge length */
} UtSettings;

/* Fills the first struct_size bytes of *settings with the defaults and sets
 * settings->struct_size = struct_size. Pass sizeof(UtSettings). */
UT_API UtStatus ut_settings_init(UtSettings* settings, size_t struct_size);

/* The settings a built-in scene runs with ("tangled-start", "dropped-cloth", "two-sheets").
 * settings->struct_size must be set by the caller. */
UT_API UtStatus ut_scene_settings(const char* scene_name, UtSettings* settings);

/* The names the library knows, so that callers need not write them out: *name = the method of
 * UtMethod value `index` ("icm", "kikuchi", "ye", "buffet") or the index-th built-in scene
 * ("tangled-start", "dropped-cloth", "two-sheets"), a string owned by the library. An index past
 * the last name fails with UT_ERROR_INVALID_ARGUMENT: count by asking until it fails. */
UT_API UtStatus ut_method_name(int32_t index, const char** name);
UT_API UtStatus ut_scene_name(int32_t index, const char** name);

/* Sets the default OpenMP thread count of parallel work started from the calling thread
 * (0 = OpenMP's own default). A world's settings.threads > 0 overrides it. Results never depend
 * on the thread count. */
UT_API UtStatus ut_set_threads(int32_t threads);

/* The thread count parallel work started from the calling thread would use now. */
UT_API UtStatus ut_get_threads(int32_t* threads);

/* ---------------------------------------------------------------------------------------- */
/* Scene description: the pieces (objects, sheets) and colliders a world is built from      */
/* ---------------------------------------------------------------------------------------- */

typedef struct UtScene UtScene;

UT_API UtStatus ut_scene_create(UtScene** out_scene);
UT_API void ut_scene_destroy(UtScene* scene);

/* Adds one piece: an arbitrary polygon mesh (triangles, quads, n-gons) in the caller's arrays,
 * which are copied. Vertex indices are local to the piece (0 .. vertex_count-1).
 *   positions:     vertex_count xyz triples, `stride` bytes apart (0 = packed)
 *   face_sizes:    face_count corner counts (>= 3)
 *   face_indices:  index_count corners, the faces' corners concatenated;
 *                  index_count must equal the sum of face_sizes
 *   inverse_mass:  NULL (all 1) or vertex_count values >= 0; 0 pins the vertex
 * Only what is needed to copy safely is checked here (NULL arrays, the corner sum, negative
 * inverse masses). The mesh itself (index ranges, faces with repeated corners, NaN/Inf
 * positions, empty pieces) is validated by ut_scene_validate and by every call that builds
 * from the scene, with UT_ERROR_INVALID_MESH and a message naming the piece, face and vertex.
 * Zero-area triangles and non-manifold edges are accepted; they are counted in UtFrameStats and
 * zero-area triangles are kept out of detection. */
UT_API UtStatus ut_scene_add_piece(UtScene* scene, const float* positions, size_t vertex_count,
                                   size_t stride, const uint32_t* face_sizes, size_t face_count,
                                   const uint32_t* face_indices, size_t index_count,
                                   const float* inverse_mass);

/* A static sphere collider (radius > 0). */
UT_API UtStatus ut_scene_add_sphere(UtScene* scene, const float center[3], float radius);

/* A ground plane z = height. */
UT_API UtStatus ut_scene_set_ground(UtScene* scene, float height);

UT_API UtStatus ut_scene_piece_count(const UtScene* scene, size_t* count);
/* Vertices of one piece, or of all pieces with piece = UT_ALL_PIECES. */
UT_API UtStatus ut_scene_vertex_count(const UtScene* scene, int32_t piece, size_t* count);

/* Builds and validates the mesh of the pieces without keeping it: UT_OK or
 * UT_ERROR_INVALID_MESH with the first problem found. */
UT_API UtStatus ut_scene_validate(const UtScene* scene);

/* ---------------------------------------------------------------------------------------- */
/* World: the frame pipeline running on a scene                                             */
/* ---------------------------------------------------------------------------------------- */

typedef struct UtWorld UtWorld;

#define UT_ALL_PIECES (-1)
#define UT_NO_PARTICLE UINT32_MAX

/* A world from a scene description; settings NULL = ut_settings_init defaults. The scene is
 * copied: it may be destroyed right after. On failure *out_world is set to NULL. */
UT_API UtStatus ut_world_create(const UtScene* scene, const UtSettings* settings,
                                UtWorld** out_world);

/* A world running one of the built-in scenes: "tangled-start", "dropped-cloth", "two-sheets".
 * settings NULL = the scene's own settings (ut_scene_settings). */
UT_API UtStatus ut_world_create_scene(const char* scene_name, const UtSettings* settings,
                                      UtWorld** out_world);

/* As ut_world_create_scene, with the start positions moved by up to 1e-6 of the particle spacing
 * along each axis, uniformly at random from `seed` (the same positions on every machine; pinned
 * particles stay; seed 0 = no jitter). A result that changes under such a jitter hangs on float
 * rounding, which differs between CPUs. */
UT_API UtStatus ut_world_create_scene_seeded(const char* scene_name, const UtSettings* settings,
                                             uint64_t seed, UtWorld** out_world);

UT_API void ut_world_destroy(UtWorld* world);

UT_API UtStatus ut_world_piece_count(const UtWorld* world, size_t* count);
/* Vertices of one piece, or of all pieces with piece = UT_ALL_PIECES. */
UT_API UtStatus ut_world_vertex_count(const UtWorld* world, int32_t piece, size_t* count);

/* The input polygons of a piece (query the size, then fill): face_sizes gets face_count
 * values, face_indices index_count local vertex indices. Either array may be NULL. */
UT_API UtStatus ut_world_piece_faces(const UtWorld* world, int32_t piece, uint32_t* face_sizes,
                                     size_t face_capacity, size_t* face_count,
                                     uint32_t* face_indices, size_t index_capacity,
                                     size_t* index_count);

/* The colliders (query the size, then fill): spheres as 4 floats each (cx, cy, cz, radius);
 * has_ground 0 or 1, ground_height its z (any of the outputs may be NULL). */
UT_API UtStatus ut_world_colliders(const UtWorld* world, float* spheres, size_t sphere_capacity,
                                   size_t* sphere_count, int32_t* has_ground, float* ground_height);

/* Settings: get fills the first settings->struct_size bytes; set validates first and changes
 * nothing on a bad value. Changing settings.method starts the new method with no history. */
UT_API UtStatus ut_world_get_settings(const UtWorld* world, UtSettings* settings);
UT_API UtStatus ut_world_set_settings(UtWorld* world, const UtSettings* settings);

/* Runs `frames` frames of the pipeline (predict, refit, detect, contours, response, solve,
 * velocities). frames = 0 does nothing. */
UT_API UtStatus ut_world_step(UtWorld* world, uint32_t frames);

/* Refreshes the detection (intersections, contours, culled boxes, stats) on the current
 * positions without stepping. */
UT_API UtStatus ut_world_detect(UtWorld* world);

/* Positions of one piece or of all pieces (piece = UT_ALL_PIECES, global vertex order: piece 0
 * first). vertex_count must equal that piece's count exactly. set keeps the velocities. */
UT_API UtStatus ut_world_get_positions(const UtWorld* world, int32_t piece, float* positions,
                                       size_t vertex_count, size_t stride);
UT_API UtStatus ut_world_set_positions(UtWorld* world, int32_t piece, const float* positions,
                                       size_t vertex_count, size_t stride);
UT_API UtStatus ut_world_get_velocities(const UtWorld* world, int32_t piece, float* velocities,
                                        size_t vertex_count, size_t stride);
UT_API UtStatus ut_world_set_velocities(UtWorld* world, int32_t piece, const float* velocities,
                                        size_t vertex_count, size_t stride);

/* Figures of the last step or detect (all zero before the first). */
typedef struct UtFrameStats {
  uint32_t struct_size;  /* sizeof(UtFrameStats) of the caller */
  uint32_t reserved;     /* 0 */
  uint64_t frame;        /* frames stepped so far */
  uint64_t triangles;    /* triangles of the mesh (after triangulating polygons) */
  uint64_t pairs;        /* intersecting triangle pairs (before the response) */
  uint64_t hits;         /* edge-triangle hits */
  uint64_t dropped_hits; /* hits exactly through a vertex or an edge, dropped */
  uint64_t contours_loop;
  uint64_t contours_boundary;
  uint64_t contours_crease;
  uint64_t culled_nodes;    /* BVH nodes whose self test was skipped */
  uint64_t candidate_pairs; /* triangle pairs tested by the narrow phase */
  uint64_t proximity_pairs;
  uint64_t stuck_contours;       /* contours that did not shrink over the last frames */
  uint64_t degenerate_triangles; /* zero-area: kept out of detection */
  uint64_t duplicate_triangles;  /* same corners as an earlier triangle: kept out of detection */
  uint64_t non_manifold_edges;   /* edges with 3+ triangles: accepted */
  double max_edge_strain;        /* max |length / rest - 1| after the frame */
  double kinetic_energy;         /* sum of m v^2 / 2 after the frame */
  /* Milliseconds per stage of the last frame. */
  double ms_predict, ms_refit, ms_broad, ms_narrow, ms_contours, ms_response, ms_solve,
      ms_velocities, ms_total;
  double ms_build; /* building the mesh and BVH (world creation, or ut_detect) */
} UtFrameStats;

UT_API UtStatus ut_world_stats(const UtWorld* world, UtFrameStats* stats);

/* Contour polylines of the last step or detect (query the size, then fill).
 *   points:  point_count xyz triples, the hit points of all contours in walking order; a closed
 *            loop does not repeat its first point at the end
 *   offsets: contour_count + 1 values; contour i is points[offsets[i] .. offsets[i+1])
 *   types:   contour_count values: 0 loop, 1 boundary, 2 crease
 * Pass NULL for all three arrays to get the counts; non-NULL arrays need the capacities
 * point_capacity (points), contour_capacity + 1 (offsets) and contour_capacity (types). */
UT_API UtStatus ut_world_contours(const UtWorld* world, float* points, size_t point_capacity,
                                  size_t* point_count, uint32_t* offsets, uint8_t* types,
                                  size_t contour_capacity, size_t* contour_count);

/* Axis-aligned boxes of the BVH nodes culled in the last step or detect (query the size, then
 * fill): 6 floats each, min xyz then max xyz. */
UT_API UtStatus ut_world_culled_boxes(const UtWorld* world, float* boxes, size_t box_capacity,
                                      size_t* box_count);

/* The input polygons of one piece that intersect anything in the last step or detect, as
 * local polygon indices, sorted and unique (query the size, then fill). */
UT_API UtStatus ut_world_intersecting_faces(const UtWorld* world, int32_t piece, uint32_t* faces,
                                            size_t capacity, size_t* count);

/* Grab (SPEC "Grab"): picks the nearest free particle along the ray (origin, direction) within
 * pick_radius of it; *particle gets its global index or UT_NO_PARTICLE when none was found
 * (still UT_OK). grab_move pulls it (and its ring) toward target in the plane with the given
 * normal during the next steps; without an active grab it fails with
 * UT_ERROR_INVALID_OPERATION. grab_end releases it and keeps its velocity; ending no grab is
 * fine. */
UT_API UtStatus ut_world_grab_begin(UtWorld* world, const float origin[3], const float direction[3],
                                    float pick_radius, uint32_t* particle);
UT_API UtStatus ut_world_grab_move(UtWorld* world, const float target[3],
                                   const float plane_normal[3]);
UT_API UtStatus ut_world_grab_end(UtWorld* world);

/* ---------------------------------------------------------------------------------------- */
/* Detect only                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Builds the mesh of the scene's pieces and detects its intersections once. settings NULL =
 * defaults; only settings.cull and settings.threads matter. Fills *stats (struct_size set by
 * the caller; frame is 0, the solver figures are 0). polygon_flags may be NULL or hold
 * polygon_count bytes, one per input polygon over all pieces in order (piece 0's faces first):
 * 1 where the polygon intersects anything, else 0; polygon_count must then equal the total
 * face count of the scene. */
UT_API UtStatus ut_detect(const UtScene* scene, const UtSettings* settings, UtFrameStats* stats,
                          uint8_t* polygon_flags, size_t polygon_count);

/* ---------------------------------------------------------------------------------------- */
/* The untangler: one state in, an intersection-free state out                              */
/* ---------------------------------------------------------------------------------------- */

/* Called after every iteration (ut_untangle: iteration, max_iterations, pairs) or frame
 * (ut_untangle_sequence: frames done, frame_count, pairs of the last frame). Return nonzero to
 * go on, 0 to cancel. Called on the thread that made the call. */
typedef int32_t (*UtProgressFn)(void* user_data, int32_t done, int32_t total, uint64_t pairs);

typedef struct UtUntangleOptions {
  uint32_t struct_size;     /* sizeof(UtUntangleOptions) of the caller */
  int32_t max_iterations;   /* pipeline frames at most, in [1, 1000000]; default 1000 */
  double pull_stiffness;    /* soft pull per frame toward the input (a carried sequence frame:
                               toward its start), in [0, 1]; default 0.05 */
  int32_t independent;      /* sequence only: 1 = every frame on its own; default 0 (each frame
                               starts from the previous frame's correction) */
  int32_t keep_seams_apart; /* 1.4: 1 = never sew seams (ut_untangle), for slits modelled on
                               purpose with coincident edges; default 0 (was reserved, 0) */
  double strain_limit;      /* every polygon edge is kept within this strain of its input length
                               while untangling (strain limiting), in [0, 1]; 0 = no limit;
                               default 0.045 (added in struct size 32) */
} UtUntangleOptions;

UT_API UtStatus ut_untangle_options_init(UtUntangleOptions* options, size_t struct_size);

typedef struct UtUntangleReport {
  uint32_t struct_size;   /* sizeof(UtUntangleReport) of the caller */
  int32_t iterations;     /* iterations run */
  uint64_t pairs_before;  /* intersecting pairs of the input, and of the output: 0 only when both */
  uint64_t pairs_after;   /* quad splits are clean (the library's and the other diagonal's) */
  uint64_t contours_loop; /* contours left */
  uint64_t contours_boundary;
  uint64_t contours_crease;
  int32_t cancelled; /* 1 when the progress callback cancelled */
  int32_t reserved;
  double max_displacement; /* from the input */
  double mean_displacement;
  double max_edge_strain; /* max |length_out / length_in - 1| over the polygon edges */
  double seconds;
  /* 1.2: iterations until the first clean state (the rest relax the stretch); -1 = never
   * clean, 0 = the input was clean */
  int32_t iterations_to_clean;
  int32_t reserved2;
  /* 1.2: wall time of each stage, summed over the iterations (both quad splits): detection
   * (refit, narrow phase, contours), global intersection analysis, the response with the
   * regions' pushes, the solver (constraints, strain limit, proximity) and, as part of the
   * solver's, the proximity searches */
  double seconds_detection;
  double seconds_analysis;
  double seconds_response;
  double seconds_solver;
  double seconds_proximity;
  /* 1.3: as part of the solver's, the final strain-limit sweeps after its iterations (0 with
   * no strain limit); disjoint from seconds_proximity */
  double seconds_strain_limit;
} UtUntangleReport;

/* Untangles the scene's pieces (their positions are the input; colliders are ignored).
 * Seams are sewn: vertices at the same position (==, in the input and in rest) that end border
 * edges running together (panels sewn by coincident vertices, seams split by an exporter) are
 * untangled as one vertex and stay together in the output. Copies that meet only at a point or
 * inside the cloth (surfaces crossing exactly through a vertex) stay separate vertices.
 *   settings:   NULL = defaults (gravity is ignored)
 *   options:    NULL = ut_untangle_options_init defaults (independent is ignored)
 *   rest:       NULL or vertex_count packed xyz: the shape whose edge lengths and bending the
 *               solver keeps (default: the input itself)
 *   output:     vertex_count packed xyz, all pieces in order; vertex_count must equal the
 *               scene's total vertex count
 *   report:     NULL or a report with struct_size set
 *   progress:   NULL or a callback; returning 0 cancels
 * On cancel the call returns UT_ERROR_CANCELLED, and output and report are still written with
 * the state reached (report->cancelled = 1). On any other failure nothing is written. */
UT_API UtStatus ut_untangle(const UtScene* scene, const UtSettings* settings,
                            const UtUntangleOptions* options, const float* rest, float* output,
                            size_t vertex_count, UtUntangleReport* report, UtProgressFn progress,
                            void* user_data);

/* Untangles every frame of a sequence (an animation cache). The scene's pieces give the
 * topology; their positions are ignored.
 *   frames:       frame_count * vertex_count packed xyz, frame after frame
 *   output:       the same size; the finished frames are written when the call returns
 *   reports:      NULL or an array of frame_count reports; its stride is reports[0].struct_size,
 *                 which the caller sets (the others are written whole); with no frames it
 *                 is an empty array and not read
 *   frames_done:  NULL or the number of frames finished
 * Unless options->independent, frame f+1 starts from input[f+1] + (output[f] - input[f]).
 * Each input frame is its own rest shape. Seams are sewn as in ut_untangle, by the positions of
 * every frame. On cancel: UT_ERROR_CANCELLED, the finished
 * frames are written and *frames_done says how many. */
UT_API UtStatus ut_untangle_sequence(const UtScene* scene, const UtSettings* settings,
                                     const UtUntangleOptions* options, const float* frames,
                                     size_t frame_count, size_t vertex_count, float* output,
                                     UtUntangleReport* reports, size_t* frames_done,
                                     UtProgressFn progress, void* user_data);

#ifdef __cplusplus
}
#endif

#endif /* UNTANGLE_H */
