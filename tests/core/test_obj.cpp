// Tests of io/obj: OBJ reading and writing, checked against hand-written files, and every
// malformed-input error with its line.
#include "untangle/io/obj.hpp"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "support/temp_dir.hpp"

namespace untangle {
namespace {

using test::TempDir;

ObjMesh parse(const std::string& text) {
  std::istringstream in(text);
  return parse_obj(in, "test.obj");
}

// The message of the IoError that parsing text throws ("" when it does not throw).
std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const IoError& error) {
    return error.what();
  }
  return "";
}

// Property: every face size and every corner form reads to the 0-based indices written by hand.
TEST(ObjRead, FacesOfAnySizeAndEveryCornerForm) {
  const ObjMesh mesh = parse(
      "# a comment line\n"
      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0.5 1.5 0 1.0\n"
      "vt 0 0\nvt 1 0\nvt 1 1 0.5\n"
      "vn 0 0 1\n"
      "f 1 2 3\n"
      "f 1/1 2/2 3/3 4/1\n"
      "f 1//1 2//1 3//1 5//1 4//1\n"
      "f 3/3/1 5/2/1 4/1/1\n");
  ASSERT_EQ(mesh.positions.size(), 5u);
  EXPECT_EQ(mesh.positions[4], Vec3(0.5, 1.5, 0));
  ASSERT_EQ(mesh.texcoords.size(), 3u);
  EXPECT_EQ(mesh.texcoords[2], Vec3(1, 1, 0.5));
  EXPECT_EQ(mesh.face_sizes, (std::vector<Index>{3, 4, 5, 3}));
  EXPECT_EQ(mesh.face_vertices, (std::vector<Index>{0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 4, 3, 2, 4, 3}));
  const Index n = kNoIndex;
  EXPECT_EQ(mesh.face_texcoords, (std::vector<Index>{n, n, n, 0, 1, 2, 0, n, n, n, n, n, 2, 1, 0}));
  EXPECT_EQ(mesh.face_normals, (std::vector<Index>{n, n, n, n, n, n, n, 0, 0, 0, 0, 0, 0, 0, 0}));
}

// Property: a negative index counts back from the last element defined before the face.
TEST(ObjRead, NegativeIndicesAreRelativeToWhatIsDefinedSoFar) {
  const ObjMesh mesh = parse(
      "v 0 0 0\nv 1 0 0\nv 1 1 0\n"
      "f -3 -2 -1\n"
      "v 0 1 0\n"
      "vt 0 0\nvt 1 1\n"
      "f -4/-2 -2/-1 -1/-1\n");
  EXPECT_EQ(mesh.face_vertices, (std::vector<Index>{0, 1, 2, 0, 2, 3}));
  EXPECT_EQ(mesh.face_texcoords[3], 0u);
  EXPECT_EQ(mesh.face_texcoords[5], 1u);
}

// Property: comments (whole-line and trailing), blank lines, CRLF, tabs, `\` continuations and
// statements the cloth does not need leave the geometry as written.
TEST(ObjRead, CommentsContinuationsAndUnknownStatements) {
  const ObjMesh mesh = parse(
      "mtllib cloth.mtl\r\n"
      "\r\n"
      "v 0 0 0 # origin\r\n"
      "v\t1 0 0\r\n"
      "v 1 \\\n 1 0\n"
      "usemtl red\ns off\nl 1 2\nvp 0.5\n"
      "f 1 2 \\\n 3\n");
  ASSERT_EQ(mesh.positions.size(), 3u);
  EXPECT_EQ(mesh.positions[2], Vec3(1, 1, 0));
  EXPECT_EQ(mesh.face_sizes, (std::vector<Index>{3}));
  EXPECT_EQ(mesh.face_vertices, (std::vector<Index>{0, 1, 2}));
}

// Property: `o` and `g` groups become pieces with local indices starting at 0, vertex positions
// carried over and the global order of the pieces mapping back to the file's vertices.
TEST(ObjPieces, GroupsBecomePiecesWithLocalIndices) {
  const ObjMesh mesh = parse(
      "o first\n"
      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
      "f 1 2 3 4\n"
      "g second\n"
      "v 0 0 1\nv 1 0 1\nv 1 1 1\nv 9 9 9\n"
      "f 5 6 7\n");
  const ObjPieces pieces = split_pieces(mesh);
  ASSERT_EQ(pieces.meshes.size(), 2u);
  EXPECT_EQ(pieces.names, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(pieces.meshes[0].face_indices, (std::vector<Index>{0, 1, 2, 3}));
  EXPECT_EQ(pieces.meshes[1].face_indices, (std::vector<Index>{0, 1, 2}));
  ASSERT_EQ(pieces.meshes[1].positions.size(), 3u);  // the unused vertex 8 is in no piece
  EXPECT_EQ(pieces.meshes[1].positions[0], Vec3(0, 0, 1));
  EXPECT_EQ(pieces.source_vertex, (std::vector<Index>{0, 1, 2, 3, 4, 5, 6}));
}

// Property: groups that share a vertex are one connected cloth, so they stay one piece; a
// repeated group name continues the earlier group; faces before any group form "default".
TEST(ObjPieces, GroupsSharingAVertexOrANameAreOnePiece) {
  const ObjMesh mesh = parse(
      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 5 0 0\nv 6 0 0\nv 6 1 0\nv 7 7 7\nv 8 8 8\n"
      "f 1 2 3\n"
      "g left\nf 1 3 4\n"
      "g right\nf 5 6 7\n"
      "g other\nf 6 8 9\n"
      "g left\nf 2 3 4\n");
  const ObjPieces pieces = split_pieces(mesh);
  ASSERT_EQ(pieces.meshes.size(), 2u);
  EXPECT_EQ(pieces.names[0], "default+left");
  EXPECT_EQ(pieces.names[1], "right+other");
  EXPECT_EQ(pieces.meshes[0].face_sizes.size(), 3u);
  EXPECT_EQ(pieces.meshes[0].face_indices, (std::vector<Index>{0, 1, 2, 0, 2, 3, 1, 2, 3}));
  EXPECT_EQ(pieces.meshes[1].face_indices, (std::vector<Index>{0, 1, 2, 1, 3, 4}));
  EXPECT_EQ(pieces.meshes[1].positions[4], Vec3(8, 8, 8));
}

TEST(ObjPieces, NoFacesIsAnError) {
  EXPECT_THROW(split_pieces(parse("v 0 0 0\n")), IoError);
}

// Property: positions given in piece order land on the file's own vertices; a vertex no face
// uses keeps its position.
TEST(ObjPieces, ScatterPositionsWritesBackInFileNumbering) {
  ObjMesh mesh = parse("v 9 9 9\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 2 3 4\n");
  const ObjPieces pieces = split_pieces(mesh);
  scatter_positions(pieces, {Vec3(1, 2, 3), Vec3(4, 5, 6), Vec3(7, 8, 9)}, mesh);
  EXPECT_EQ(mesh.positions[0], Vec3(9, 9, 9));
  EXPECT_EQ(mesh.positions[1], Vec3(1, 2, 3));
  EXPECT_EQ(mesh.positions[3], Vec3(7, 8, 9));
  EXPECT_THROW(scatter_positions(pieces, {Vec3::Zero()}, mesh), std::invalid_argument);
}

// Property: writing then reading gives back exactly the same doubles, faces, texture and normal
// references and pieces (random values, so no pretty decimal hides a lossy format).
TEST(ObjWrite, RoundTripIsExact) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> value(-1e3, 1e3);
  ObjMesh mesh;
  for (int i = 0; i < 50; ++i) mesh.positions.emplace_back(value(random), value(random), 1e-7);
  for (int i = 0; i < 4; ++i) mesh.texcoords.emplace_back(value(random), value(random), 0);
  mesh.normals.emplace_back(0, 0, 1);
  mesh.groups = {{"a sheet", 0, true}, {"empty", 10, false}, {"b", 10, false}};
  for (Index f = 0; f < 20; ++f) {
    const Index size = 3 + f % 3;
    mesh.face_sizes.push_back(size);
    for (Index k = 0; k < size; ++k) {
      mesh.face_vertices.push_back((f + 7 * k) % 50);
      mesh.face_texcoords.push_back(f % 2 == 0 ? (f + k) % 4 : kNoIndex);
      mesh.face_normals.push_back(f % 3 == 0 ? 0 : kNoIndex);
    }
  }
  std::ostringstream out;
  write_obj(out, mesh);
  const ObjMesh back = parse(out.str());
  EXPECT_EQ(back.positions, mesh.positions);
  EXPECT_EQ(back.texcoords, mesh.texcoords);
  EXPECT_EQ(back.normals, mesh.normals);
  EXPECT_EQ(back.face_sizes, mesh.face_sizes);
  EXPECT_EQ(back.face_vertices, mesh.face_vertices);
  EXPECT_EQ(back.face_texcoords, mesh.face_texcoords);
  EXPECT_EQ(back.face_normals, mesh.face_normals);
  ASSERT_EQ(back.groups.size(), 3u);
  for (std::size_t g = 0; g < 3; ++g) {
    EXPECT_EQ(back.groups[g].name, mesh.groups[g].name);
    EXPECT_EQ(back.groups[g].first_face, mesh.groups[g].first_face);
    EXPECT_EQ(back.groups[g].object, mesh.groups[g].object);
  }

  std::ostringstream without;
  write_obj(without, mesh, false);
  const ObjMesh stripped = parse(without.str());
  EXPECT_TRUE(stripped.normals.empty());
  EXPECT_EQ(stripped.face_normals, std::vector<Index>(mesh.face_vertices.size(), kNoIndex));
  EXPECT_EQ(stripped.face_texcoords, mesh.face_texcoords);
}

// Property: pieces written with obj_from_pieces read back as the same pieces (through a file).
TEST(ObjWrite, PiecesRoundTripThroughAFile) {
  TempDir dir;
  PolygonMesh quad{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0), Vec3(0, 1, 0)}, {4}, {0, 1, 2, 3}};
  PolygonMesh tri{{Vec3(0, 0, 1), Vec3(1, 0, 1), Vec3(0, 1, 1)}, {3}, {2, 1, 0}};
  const std::vector<PolygonMesh> input{quad, tri};
  const std::vector<std::string> names{"quad", "tri"};
  write_obj(dir / "pieces.obj", obj_from_pieces(input, names));
  const ObjPieces back = split_pieces(read_obj(dir / "pieces.obj"));
  ASSERT_EQ(back.meshes.size(), 2u);
  EXPECT_EQ(back.names, names);
  for (std::size_t p = 0; p < 2; ++p) {
    EXPECT_EQ(back.meshes[p].positions, input[p].positions);
    EXPECT_EQ(back.meshes[p].face_sizes, input[p].face_sizes);
    EXPECT_EQ(back.meshes[p].face_indices, input[p].face_indices);
  }
  EXPECT_THROW(obj_from_pieces(input, std::vector<std::string>{"one"}), std::invalid_argument);

  // As one object: a single `o` and a `g` per piece, which still reads back as two pieces.
  std::ostringstream out;
  write_obj(out, obj_from_pieces(input, names, "scene"));
  EXPECT_NE(out.str().find("o scene\ng quad\n"), std::string::npos);
  EXPECT_EQ(out.str().find("o quad"), std::string::npos);
  EXPECT_EQ(split_pieces(parse(out.str())).names, names);
}

// Property: material and smoothing statements survive a read and a write, before the same faces
// (so Blender still assigns the same materials); other statements are dropped.
TEST(ObjWrite, MaterialStatementsAreKept) {
  const ObjMesh mesh = parse(
      "mtllib cloth.mtl\no Cloth\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n"
      "s 0\nusemtl Red\nf 1 2 3\nl 1 2\nusemtl Blue\nf 2 4 3\n");
  ASSERT_EQ(mesh.kept.size(), 4u);
  EXPECT_EQ(mesh.kept[3].text, "usemtl Blue");
  EXPECT_EQ(mesh.kept[3].first_face, 1u);
  std::ostringstream out;
  write_obj(out, mesh);
  EXPECT_TRUE(out.str().starts_with("# cloth-untangle\nmtllib cloth.mtl\nv 0 0 0\n")) << out.str();
  EXPECT_NE(out.str().find("o Cloth\ns 0\nusemtl Red\nf 1 2 3\nusemtl Blue\nf 2 4 3\n"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("l 1 2"), std::string::npos);
}

// Property: what a `v` line holds after x y z (a vertex colour, a weight) is written back as it
// was read, beside the new position; vertices without it get none.
TEST(ObjWrite, VertexColoursAreKept) {
  ObjMesh mesh =
      parse("v 0 0 0 1.0 0.5 0.25\nv 1 0 0\nv 0 1 0 0.1 0.2 0.3\nv 1 1 0 2\nf 1 2 3\nf 2 4 3\n");
  ASSERT_EQ(mesh.vertex_tails.size(), 4u);
  EXPECT_EQ(mesh.vertex_tails[0], "1.0 0.5 0.25");
  EXPECT_EQ(mesh.vertex_tails[1], "");
  mesh.positions[0] = Vec3(0.5, 0, 0);
  std::ostringstream out;
  write_obj(out, mesh);
  EXPECT_NE(out.str().find("v 0.5 0 0 1.0 0.5 0.25\nv 1 0 0\nv 0 1 0 0.1 0.2 0.3\nv 1 1 0 2\n"),
            std::string::npos)
      << out.str();
  EXPECT_TRUE(parse("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").vertex_tails.empty());
}

// Property: an `o` directly followed by a `g` (Blender's export with groups) makes one piece
// named after the `g`, and writing back keeps both statements.
TEST(ObjPieces, ObjectFollowedByGroupIsOnePiece) {
  const ObjMesh mesh = parse("o Cloth\ng Cloth_mat\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const ObjPieces pieces = split_pieces(mesh);
  EXPECT_EQ(pieces.names, (std::vector<std::string>{"Cloth_mat"}));
  std::ostringstream out;
  write_obj(out, mesh);
  EXPECT_NE(out.str().find("o Cloth\ng Cloth_mat\nf 1 2 3\n"), std::string::npos);
}

// Property: each malformed statement is refused with the file name, its line and the reason.
TEST(ObjRead, MalformedInputNamesTheLine) {
  const std::string square = "v 0 0 0\nv 1 0 0\nv 1 1 0\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"v 0 0 0\nv 1 x 0\n", "test.obj:2: 'x' is not a number"},
      {"v 0 0 0\nv 1 0.5.5 0\n", "test.obj:2: '0.5.5' is not a number"},
      {"v 1 0\n", "test.obj:1: vertex has 2 numbers, expected 3 to 7"},
      {"vn 1 0 0 0\n", "test.obj:1: normal has 4 numbers, expected 3"},
      {"v nan 0 0\n", "test.obj:1: 'nan' is not a finite number"},
      {"v 1e999 0 0\n", "test.obj:1: '1e999' is out of the range of a double"},
      {square + "f 1 2\n", "test.obj:4: face has 2 corners, needs at least 3"},
      {square + "f 0 1 2\n", "test.obj:4: vertex index 0 (OBJ indices start at 1)"},
      {square + "f 1 2 x\n", "test.obj:4: 'x' is not a vertex index"},
      {square + "f 1 2 -4\n", "test.obj:4: vertex index -4 reaches before the first vertex"},
      {square + "f 1 2 3\n# later\nf 1 2 7\n",
       "test.obj:6: face uses vertex 7, but the file defines 3"},
      {square + "f 1/1 2/1 3/1\n", "test.obj:4: face uses texture coordinate 1, but the file"},
      {square + "vn 0 0 1\nf 1//1 2//2 3//1\n", "test.obj:5: face uses normal 2, but the file"},
      {square + "f 1/1/1/1 2 3\n", "test.obj:4: face corner '1/1/1/1' has too many '/'"},
      {square + "f /1 2 3\n", "test.obj:4: face corner '/1' has no vertex index"},
      {square + "f 1 2 99999999999\n", "test.obj:4: vertex index 99999999999 is too large"},
      {"v 0 0 \\\n x\n", "test.obj:1: 'x' is not a number"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string message = parse_error(text);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "input:\n"
        << text << "message: " << message << "\nexpected: " << expected;
  }
}

// Property: no byte sequence crashes the parser; it returns a mesh whose indices are all in
// range or throws IoError (random lines built from OBJ-like fragments, run under ASan in CI).
TEST(ObjRead, RandomInputNeverCrashes) {
  const std::vector<std::string> fragments = {
      "v", "vt", "vn", "f",  "o",   "g", " ",  "1",  "-1",  "0", "/",  "//", "2.5",
      "e", "\n", "#",  "\\", "nan", "-", "\t", "\r", "999", "x", "1e", "+3", std::string(1, '\0')};
  std::mt19937 random(11);
  std::uniform_int_distribution<std::size_t> pick(0, fragments.size() - 1);
  std::size_t parsed = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
    for (int k = 0; k < 40; ++k) text += fragments[pick(random)];
    try {
      const ObjMesh mesh = parse(text);
      for (const Index v : mesh.face_vertices) ASSERT_LT(v, mesh.positions.size());
      ++parsed;
    } catch (const IoError&) {
    }
  }
  EXPECT_GT(parsed, 0u);  // the generator also makes valid files, so both paths ran
}

TEST(ObjRead, MissingFileNamesThePath) {
  try {
    read_obj("/nonexistent/dir/cloth.obj");
    FAIL() << "no error";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/dir/cloth.obj"), std::string::npos);
  }
}

}  // namespace
}  // namespace untangle
