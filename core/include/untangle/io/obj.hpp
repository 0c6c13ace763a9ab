// OBJ: the Wavefront file that carries the cloth's polygons to and from other programs; its
// `o`/`g` groups become pieces. Parsing never trusts the file.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "untangle/io/io_error.hpp"
#include "untangle/mesh.hpp"

namespace untangle {

// An OBJ file as written: every vertex in file order, faces with absolute 0-based indices
// (texture and normal indices are kNoIndex where a corner has none) and named face groups.
// Keeping the file's own numbering lets a tool write back what it read with new positions.
struct ObjMesh {
  Positions positions;
  // What a `v` line holds after x y z (a w, or an r g b colour as ZBrush, MeshLab and others
  // write), verbatim, so that it is written back; empty when no vertex has any.
  std::vector<std::string> vertex_tails;
  std::vector<Vec3> texcoords;  // u, v, w (w = 0 when absent)
  std::vector<Vec3> normals;
  std::vector<Index> face_sizes;
  std::vector<Index> face_vertices;
  std::vector<Index> face_texcoords;
  std::vector<Index> face_normals;
  // Face f belongs to the last group whose first_face <= f; groups are in file order. A group
  // is an `o` (object) or a `g` statement; both are kept so that a file written back keeps the
  // objects another program (Blender's importer) makes of it.
  struct Group {
    std::string name;
    Index first_face = 0;
    bool object = true;
  };
  std::vector<Group> groups;
  // Material and smoothing statements (mtllib, usemtl, s), kept verbatim so that a file written
  // back still renders as before; each comes before face first_face.
  struct Statement {
    std::string text;
    Index first_face = 0;
  };
  std::vector<Statement> kept;

  std::size_t face_count() const { return face_sizes.size(); }
};

// The cloth pieces of an OBJ file: one PolygonMesh per piece with local vertex indices.
// Groups that share a vertex are one piece (they are one connected cloth; splitting them would
// cut it apart), and their names are joined with '+'. Vertices no face uses belong to no piece.
struct ObjPieces {
  std::vector<std::string> names;
  std::vector<PolygonMesh> meshes;
  // For each vertex of the pieces in global order (piece 0 first), its index in ObjMesh.
  std::vector<Index> source_vertex;

  std::size_t vertex_count() const { return source_vertex.size(); }
};

// Accepts faces of any size, corners as v, v/vt, v//vn and v/vt/vn with positive (1-based) or
// negative (relative) indices, `#` comments, `\` line continuations; keeps material and
// smoothing statements for writing back and ignores the others (lines, points, curves). Throws
// IoError with the line number for malformed numbers, faces with fewer than 3 corners, index 0 or
// an index out of range, and non-finite coordinates.
ObjMesh parse_obj(std::istream& in, const std::string& source_name = "<obj>");
ObjMesh read_obj(const std::filesystem::path& path);

// Writes v, vt, vn (when with_normals), the `o`, `g` and kept statements and faces with 1-based
// indices.
void write_obj(std::ostream& out, const ObjMesh& mesh, bool with_normals = true);
void write_obj(const std::filesystem::path& path, const ObjMesh& mesh, bool with_normals = true);

// Throws IoError when the file has no face.
ObjPieces split_pieces(const ObjMesh& mesh);

// Copies positions given in the pieces' global order back to the file's vertices.
void scatter_positions(const ObjPieces& pieces, const Positions& positions, ObjMesh& mesh);

// An OBJ file holding the given pieces in order: one `o` statement each, or, with an
// object_name, one `o object_name` and a `g` statement per piece (one Blender object whose
// vertex order is the pieces' global order, as a PC2 cache of all pieces needs).
ObjMesh obj_from_pieces(std::span<const PolygonMesh> pieces, std::span<const std::string> names,
                        const std::string& object_name = "");

}  // namespace untangle
