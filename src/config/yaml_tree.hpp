// A YAML document as a compact read-only tree, built from yaml-cpp's event parser. It exists
// because yaml-cpp's own node tree costs about 500 bytes a node (a 15 MB config: 650 MB of RSS),
// and because building it ourselves lets us refuse hostile structure while parsing: nesting
// deeper than a config ever needs, and aliases that would expand past the size cap
// (billion laughs), each with its line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config::yaml {

enum class Type : std::uint8_t { kNull, kScalar, kSequence, kMap };

struct Limits {
  std::size_t max_depth = 32;  // a sluice config nests 5 levels; 32 leaves room for anything sane
  // Nodes, and bytes of scalars, counted with every alias expanded. A document without aliases
  // never reaches the size of its own text, so this refuses only what aliases blow up.
  std::size_t max_expanded = 16u << 20;
  std::size_t max_documents = 2;  // the reader needs to see a second one only to refuse it
};

// Thrown by parse(): YAML syntax (yaml-cpp's message) or a limit; `line` is 1-based.
class ParseError : public std::runtime_error {
 public:
  ParseError(int line, bool syntax, const std::string& message)
      : std::runtime_error(message), line_(line), syntax_(syntax) {}
  int line() const { return line_; }
  bool syntax() const { return syntax_; }

 private:
  int line_;
  bool syntax_;
};

class Tree;

// A view of one node; valid while its Tree lives. An alias is the node it names (shared, not
// copied).
class Node {
 public:
  Type type() const;
  bool is_null() const { return type() == Type::kNull; }
  bool is_scalar() const { return type() == Type::kScalar; }
  bool is_sequence() const { return type() == Type::kSequence; }
  bool is_map() const { return type() == Type::kMap; }
  int line() const;  // 1-based, where the node starts
  // The text of a scalar; "" for any other node.
  std::string_view scalar() const;
  // Items of a sequence, pairs of a map, 0 otherwise.
  std::size_t size() const;
  Node item(std::size_t i) const;  // sequences
  Node key(std::size_t i) const;   // maps: pair i
  Node value(std::size_t i) const;
  // The value of the first pair whose key is the scalar `key` (maps only).
  std::optional<Node> find(std::string_view key) const;

 private:
  friend class Tree;
  Node(const Tree* tree, std::uint32_t index) : tree_(tree), index_(index) {}
  const Tree* tree_;
  std::uint32_t index_;
};

class Tree {
 public:
  Tree();
  // The documents of the stream, in order (at most Limits::max_documents of them).
  std::vector<Node> documents() const;
  // The first document, or a null node for an empty stream (as yaml-cpp's Load gives).
  Node root() const;

 private:
  friend class Node;
  friend class Builder;
  struct Entry {
    Type type = Type::kNull;
    std::uint32_t line = 0;
    std::uint32_t begin = 0;  // scalar: offset in text_; collection: offset in kids_
    std::uint32_t count = 0;  // scalar: bytes; sequence: items; map: pairs
  };
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> kids_;  // a map's pairs as key, value, key, value
  std::string text_;                 // every scalar, back to back
  std::vector<std::uint32_t> documents_;
};

// Parses `text` (YAML or JSON, which is YAML's flow syntax). Throws ParseError.
Tree parse(std::string_view text, const Limits& limits);

}  // namespace sluice::config::yaml
