#include "untangle/io/obj.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <istream>
#include <limits>
#include <numeric>
#include <ostream>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "errno_message.hpp"

namespace untangle {
namespace {

// ---------------------------------------------------------------------------------------------
// OBJ parsing

class ObjParser {
 public:
  explicit ObjParser(std::string source) : source_(std::move(source)) {}

  void statement(std::string_view text, std::size_t line) {
    line_ = line;
    tokens_.clear();
    std::size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && is_space(text[i])) ++i;
      std::size_t j = i;
      while (j < text.size() && !is_space(text[j])) ++j;
      if (j > i) tokens_.push_back(text.substr(i, j - i));
      i = j;
    }
    if (tokens_.empty()) return;
    const std::string_view keyword = tokens_[0];
    if (keyword == "v") {
      vertex();
    } else if (keyword == "vt") {
      texcoord();
    } else if (keyword == "vn") {
      normal();
    } else if (keyword == "f") {
      face();
    } else if (keyword == "o" || keyword == "g") {
      group();
    } else if (keyword == "mtllib" || keyword == "usemtl" || keyword == "s") {
      std::string kept(keyword);
      for (std::size_t k = 1; k < tokens_.size(); ++k) kept += " " + std::string(tokens_[k]);
      mesh_.kept.push_back({std::move(kept), static_cast<Index>(mesh_.face_count())});
    }
    // Every other statement (l, p, curves, ...) carries nothing the cloth needs; ignoring it
    // keeps files from other tools readable.
  }

  ObjMesh finish() {
    // Positive indices may name an element defined later in the file, so they are checked
    // against the final counts here, with the line of the face that used them.
    for (std::size_t f = 0; f < mesh_.face_count(); ++f) {
      const Index begin = face_begin_[f];
      for (Index c = begin; c < begin + mesh_.face_sizes[f]; ++c) {
        check_range(mesh_.face_vertices[c], mesh_.positions.size(), "vertex", face_line_[f]);
        check_range(mesh_.face_texcoords[c], mesh_.texcoords.size(), "texture coordinate",
                    face_line_[f]);
        check_range(mesh_.face_normals[c], mesh_.normals.size(), "normal", face_line_[f]);
      }
    }
    return std::move(mesh_);
  }

  [[noreturn]] void fail(const std::string& what, std::size_t line) const {
    throw IoError(source_ + ":" + std::to_string(line) + ": " + what);
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; }

  [[noreturn]] void fail(const std::string& what) const { fail(what, line_); }

  double number(std::string_view token) const {
    std::string_view digits = token;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    double value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error == std::errc::result_out_of_range) {
      fail("'" + std::string(token) + "' is out of the range of a double");
    }
    if (error != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
      fail("'" + std::string(token) + "' is not a number");
    }
    if (!std::isfinite(value)) fail("'" + std::string(token) + "' is not a finite number");
    return value;
  }

  Vec3 numbers(std::size_t min_count, std::size_t max_count, const char* what) const {
    const std::size_t count = tokens_.size() - 1;
    if (count < min_count || count > max_count) {
      const std::string expected =
          min_count == max_count ? std::to_string(min_count)
                                 : std::to_string(min_count) + " to " + std::to_string(max_count);
      fail(std::string(what) + " has " + std::to_string(count) + " numbers, expected " + expected);
    }
    Vec3 value = Vec3::Zero();
    for (std::size_t k = 0; k < count; ++k) {
      const double x = number(tokens_[k + 1]);
      if (k < 3) value[static_cast<Eigen::Index>(k)] = x;
    }
    return value;
  }

  // `v x y z`, optionally followed by w or by an r g b colour (common extensions).
  void vertex() {
    mesh_.positions.push_back(numbers(3, 7, "vertex"));
    if (tokens_.size() <= 4) return;
    std::string tail(tokens_[4]);
    for (std::size_t k = 5; k < tokens_.size(); ++k) tail += " " + std::string(tokens_[k]);
    mesh_.vertex_tails.resize(mesh_.positions.size());
    mesh_.vertex_tails.back() = std::move(tail);
  }
  void texcoord() { mesh_.texcoords.push_back(numbers(1, 3, "texture coordinate")); }
  void normal() { mesh_.normals.push_back(numbers(3, 3, "normal")); }

  // Returns the 0-based index an OBJ reference names; kNoIndex for an empty field.
  Index reference(std::string_view field, std::size_t defined, const char* what) const {
    if (field.empty()) return kNoIndex;
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc() || end != field.data() + field.size()) {
      fail("'" + std::string(field) + "' is not a " + what + " index");
    }
    if (value == 0) fail(std::string(what) + " index 0 (OBJ indices start at 1)");
    const auto defined_count = static_cast<std::int64_t>(defined);
    if (value < 0) {
      // Relative: -1 is the last element defined so far.
      if (-value > defined_count) {
        fail(std::string(what) + " index " + std::to_string(value) + " reaches before the first " +
             what + " (" + std::to_string(defined) + " defined so far)");
      }
      return static_cast<Index>(defined_count + value);
    }
    if (value > static_cast<std::int64_t>(kNoIndex - 1)) {
      fail(std::string(what) + " index " + std::to_string(value) + " is too large");
    }
    return static_cast<Index>(value - 1);
  }

  void face() {
    const std::size_t corners = tokens_.size() - 1;
    if (corners < 3) {
      fail("face has " + std::to_string(corners) + " corner" + (corners == 1 ? "" : "s") +
           ", needs at least 3");
    }
    if (mesh_.groups.empty()) mesh_.groups.push_back({"default", 0});
    face_begin_.push_back(static_cast<Index>(mesh_.face_vertices.size()));
    face_line_.push_back(line_);
    for (std::size_t k = 1; k <= corners; ++k) {
      const std::string_view corner = tokens_[k];
      std::array<std::string_view, 3> fields{};
      std::size_t field_count = 0;
      std::size_t start = 0;
      while (true) {
        const std::size_t slash = corner.find('/', start);
        if (field_count == 3) fail("face corner '" + std::string(corner) + "' has too many '/'");
        fields[field_count++] = corner.substr(
            start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (slash == std::string_view::npos) break;
        start = slash + 1;
      }
      if (fields[0].empty()) fail("face corner '" + std::string(corner) + "' has no vertex index");
      mesh_.face_vertices.push_back(reference(fields[0], mesh_.positions.size(), "vertex"));
      mesh_.face_texcoords.push_back(
          reference(fields[1], mesh_.texcoords.size(), "texture coordinate"));
      mesh_.face_normals.push_back(reference(fields[2], mesh_.normals.size(), "normal"));
    }
    mesh_.face_sizes.push_back(static_cast<Index>(corners));
  }

  void group() {
    std::string name;
    for (std::size_t k = 1; k < tokens_.size(); ++k) {
      if (k > 1) name += ' ';
      name += tokens_[k];
    }
    if (name.empty()) name = "default";
    // A group followed by no face (`o Cloth` right before `g Cloth_mat`) owns no face and so
    // makes no piece, but it is kept for writing the file back.
    mesh_.groups.push_back(
        {std::move(name), static_cast<Index>(mesh_.face_count()), tokens_[0] == "o"});
  }

  void check_range(Index index, std::size_t count, const char* what, std::size_t line) const {
    if (index != kNoIndex && index >= count) {
      fail(std::string("face uses ") + what + " " + std::to_string(std::size_t{index} + 1) +
               ", but the file defines " + std::to_string(count),
           line);
    }
  }

  std::string source_;
  std::size_t line_ = 0;
  std::vector<std::string_view> tokens_;
  std::vector<Index> face_begin_;
  std::vector<std::size_t> face_line_;
  ObjMesh mesh_;
};

// ---------------------------------------------------------------------------------------------
// OBJ writing

void append_number(std::string& out, double value) {
  std::array<char, 32> buffer{};
  // The shortest text that reads back as the same double.
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out.append(buffer.data(), result.ptr);
}

std::string clean_name(const std::string& name) {
  std::string clean = name;
  for (char& c : clean) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '#') c = '_';
  }
  return clean.empty() ? std::string("default") : clean;
}

}  // namespace

ObjMesh parse_obj(std::istream& in, const std::string& source_name) {
  ObjParser parser(source_name);
  std::string line;
  std::string statement;
  std::size_t line_number = 0;
  std::size_t statement_line = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (statement.empty()) statement_line = line_number;
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.pop_back();
    }
    if (!line.empty() && line.back() == '\\') {
      line.back() = ' ';
      statement += line;
      continue;
    }
    statement += line;
    parser.statement(statement, statement_line);
    statement.clear();
  }
  if (in.bad()) parser.fail("read error", line_number);
  if (!statement.empty()) parser.statement(statement, statement_line);
  return parser.finish();
}

ObjMesh read_obj(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open '" + path.string() + "' for reading: " + errno_message());
  return parse_obj(in, path.string());
}

void write_obj(std::ostream& out, const ObjMesh& mesh, bool with_normals) {
  std::string text = "# cloth-untangle\n";
  const auto is_library = [](const ObjMesh::Statement& s) { return s.text.starts_with("mtllib"); };
  // Material libraries belong to the whole file: at its top, where readers expect them.
  for (const ObjMesh::Statement& s : mesh.kept) {
    if (is_library(s)) text += clean_name(s.text) + "\n";
  }
  const auto write_vectors = [&](const std::vector<Vec3>& vectors, const char* keyword,
                                 int components) {
    for (const Vec3& v : vectors) {
      text += keyword;
      for (int k = 0; k < components; ++k) {
        text += ' ';
        append_number(text, v[k]);
      }
      text += '\n';
    }
  };
  for (std::size_t i = 0; i < mesh.positions.size(); ++i) {
    text += 'v';
    for (int k = 0; k < 3; ++k) {
      text += ' ';
      append_number(text, mesh.positions[i][k]);
    }
    if (i < mesh.vertex_tails.size() && !mesh.vertex_tails[i].empty()) {
      text += ' ';
      text += mesh.vertex_tails[i];
    }
    text += '\n';
  }
  write_vectors(mesh.texcoords, "vt", 2);
  if (with_normals) write_vectors(mesh.normals, "vn", 3);

  std::size_t corner = 0;
  std::size_t group = 0;
  std::size_t statement = 0;
  // Groups before the kept statements of the same face: the order Blender writes
  // (`o`, `s`, `usemtl`, faces).
  const auto write_groups_until = [&](std::size_t face) {
    for (; group < mesh.groups.size() && mesh.groups[group].first_face <= face; ++group) {
      text += mesh.groups[group].object ? "o " : "g ";
      text += clean_name(mesh.groups[group].name) + "\n";
    }
    for (; statement < mesh.kept.size() && mesh.kept[statement].first_face <= face; ++statement) {
      if (!is_library(mesh.kept[statement])) text += clean_name(mesh.kept[statement].text) + "\n";
    }
  };
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    write_groups_until(f);
    text += 'f';
    for (Index k = 0; k < mesh.face_sizes[f]; ++k, ++corner) {
      text += ' ';
      text += std::to_string(std::size_t{mesh.face_vertices[corner]} + 1);
      const Index vt = mesh.face_texcoords.empty() ? kNoIndex : mesh.face_texcoords[corner];
      const Index vn =
          !with_normals || mesh.face_normals.empty() ? kNoIndex : mesh.face_normals[corner];
      if (vt != kNoIndex || vn != kNoIndex) {
        text += '/';
        if (vt != kNoIndex) text += std::to_string(std::size_t{vt} + 1);
      }
      if (vn != kNoIndex) {
        text += '/';
        text += std::to_string(std::size_t{vn} + 1);
      }
    }
    text += '\n';
  }
  write_groups_until(std::numeric_limits<std::size_t>::max());
  out << text;
}

void write_obj(const std::filesystem::path& path, const ObjMesh& mesh, bool with_normals) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw IoError("cannot open '" + path.string() + "' for writing: " + errno_message());
  write_obj(out, mesh, with_normals);
  out.close();
  if (!out) throw IoError("cannot write '" + path.string() + "': " + errno_message());
}

ObjPieces split_pieces(const ObjMesh& mesh) {
  if (mesh.face_count() == 0) throw IoError("the OBJ file has no faces");
  // Groups with the same name are one group, as OBJ readers treat a repeated `g name`.
  std::unordered_map<std::string, Index> group_of_name;
  std::vector<std::string> group_names;
  std::vector<Index> face_group(mesh.face_count());
  for (std::size_t g = 0; g < mesh.groups.size(); ++g) {
    const auto [it, inserted] =
        group_of_name.try_emplace(mesh.groups[g].name, static_cast<Index>(group_names.size()));
    if (inserted) group_names.push_back(mesh.groups[g].name);
    const std::size_t end =
        g + 1 < mesh.groups.size() ? mesh.groups[g + 1].first_face : mesh.face_count();
    for (std::size_t f = mesh.groups[g].first_face; f < end; ++f) face_group[f] = it->second;
  }

  // Union-find over groups joined by a shared vertex.
  std::vector<Index> parent(group_names.size());
  std::iota(parent.begin(), parent.end(), Index{0});
  const auto root = [&](Index g) {
    while (parent[g] != g) g = parent[g] = parent[parent[g]];
    return g;
  };
  std::vector<Index> vertex_group(mesh.positions.size(), kNoIndex);
  std::vector<Index> face_begin(mesh.face_count() + 1, 0);
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    face_begin[f + 1] = face_begin[f] + mesh.face_sizes[f];
    for (Index c = face_begin[f]; c < face_begin[f + 1]; ++c) {
      Index& owner = vertex_group[mesh.face_vertices[c]];
      if (owner == kNoIndex) {
        owner = face_group[f];
      } else {
        const Index a = root(owner);
        const Index b = root(face_group[f]);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
      }
    }
  }

  // Pieces in the order their first face appears; vertices of a piece in file order.
  ObjPieces pieces;
  std::vector<Index> piece_of_root(group_names.size(), kNoIndex);
  std::vector<Index> face_piece(mesh.face_count());
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    const Index r = root(face_group[f]);
    if (piece_of_root[r] == kNoIndex) {
      piece_of_root[r] = static_cast<Index>(pieces.meshes.size());
      pieces.meshes.emplace_back();
      pieces.names.emplace_back();
    }
    face_piece[f] = piece_of_root[r];
  }
  for (std::size_t g = 0; g < group_names.size(); ++g) {
    const Index p = piece_of_root[root(static_cast<Index>(g))];
    if (p == kNoIndex) continue;
    std::string& name = pieces.names[p];
    if (!name.empty()) name += '+';
    name += group_names[g];
  }

  std::vector<Index> local(mesh.positions.size(), kNoIndex);
  for (std::size_t p = 0; p < pieces.meshes.size(); ++p) {
    PolygonMesh& piece = pieces.meshes[p];
    for (std::size_t v = 0; v < mesh.positions.size(); ++v) {
      if (vertex_group[v] != kNoIndex && piece_of_root[root(vertex_group[v])] == p) {
        local[v] = static_cast<Index>(piece.positions.size());
        piece.positions.push_back(mesh.positions[v]);
        pieces.source_vertex.push_back(static_cast<Index>(v));
      }
    }
  }
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    PolygonMesh& piece = pieces.meshes[face_piece[f]];
    piece.face_sizes.push_back(mesh.face_sizes[f]);
    for (Index c = face_begin[f]; c < face_begin[f + 1]; ++c) {
      piece.face_indices.push_back(local[mesh.face_vertices[c]]);
    }
  }
  return pieces;
}

void scatter_positions(const ObjPieces& pieces, const Positions& positions, ObjMesh& mesh) {
  if (positions.size() != pieces.vertex_count()) {
    throw std::invalid_argument("scatter_positions: " + std::to_string(positions.size()) +
                                " positions for " + std::to_string(pieces.vertex_count()) +
                                " piece vertices");
  }
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const Index source = pieces.source_vertex[i];
    if (source >= mesh.positions.size()) {
      throw std::invalid_argument("scatter_positions: the pieces come from another file");
    }
    mesh.positions[source] = positions[i];
  }
}

ObjMesh obj_from_pieces(std::span<const PolygonMesh> pieces, std::span<const std::string> names,
                        const std::string& object_name) {
  if (!names.empty() && names.size() != pieces.size()) {
    throw std::invalid_argument("obj_from_pieces: " + std::to_string(names.size()) + " names for " +
                                std::to_string(pieces.size()) + " pieces");
  }
  ObjMesh mesh;
  const bool one_object = !object_name.empty();
  if (one_object) mesh.groups.push_back({object_name, 0, true});
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const PolygonMesh& piece = pieces[p];
    const auto offset = static_cast<Index>(mesh.positions.size());
    mesh.groups.push_back({names.empty() ? "piece_" + std::to_string(p) : names[p],
                           static_cast<Index>(mesh.face_count()), !one_object});
    mesh.positions.insert(mesh.positions.end(), piece.positions.begin(), piece.positions.end());
    mesh.face_sizes.insert(mesh.face_sizes.end(), piece.face_sizes.begin(), piece.face_sizes.end());
    for (const Index v : piece.face_indices) {
      if (v >= piece.positions.size()) {
        throw std::invalid_argument("obj_from_pieces: piece " + std::to_string(p) +
                                    " uses vertex " + std::to_string(v) + " of " +
                                    std::to_string(piece.positions.size()));
      }
      mesh.face_vertices.push_back(offset + v);
    }
  }
  mesh.face_texcoords.assign(mesh.face_vertices.size(), kNoIndex);
  mesh.face_normals.assign(mesh.face_vertices.size(), kNoIndex);
  return mesh;
}

}  // namespace untangle
