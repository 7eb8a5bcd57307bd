// The compact YAML tree (yaml_tree.hpp): yaml-cpp's parser feeds events to a Builder, which
// appends each node to flat arrays and enforces the limits as it goes.
#include "yaml_tree.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <istream>
#include <streambuf>

namespace sluice::config::yaml {

Type Node::type() const { return tree_->entries_[index_].type; }
int Node::line() const { return static_cast<int>(tree_->entries_[index_].line); }

std::string_view Node::scalar() const {
  const Tree::Entry& e = tree_->entries_[index_];
  if (e.type != Type::kScalar) return {};
  return std::string_view(tree_->text_).substr(e.begin, e.count);
}

std::size_t Node::size() const {
  const Tree::Entry& e = tree_->entries_[index_];
  return e.type == Type::kSequence || e.type == Type::kMap ? e.count : 0;
}

Node Node::item(std::size_t i) const {
  return Node(tree_, tree_->kids_[tree_->entries_[index_].begin + i]);
}
Node Node::key(std::size_t i) const {
  return Node(tree_, tree_->kids_[tree_->entries_[index_].begin + 2 * i]);
}
Node Node::value(std::size_t i) const {
  return Node(tree_, tree_->kids_[tree_->entries_[index_].begin + 2 * i + 1]);
}

std::optional<Node> Node::find(std::string_view name) const {
  if (!is_map()) return std::nullopt;
  for (std::size_t i = 0; i < size(); ++i) {
    const Node k = key(i);
    if (k.is_scalar() && k.scalar() == name) return value(i);
  }
  return std::nullopt;
}

Tree::Tree() {
  // A node costs its Entry and one index in its parent's kids_: 20 bytes, plus its text.
  static_assert(sizeof(Entry) == 16);
  entries_.push_back(Entry{});  // entry 0: the null node root() falls back on
}

Node Tree::root() const { return Node(this, documents_.empty() ? 0 : documents_.front()); }

std::vector<Node> Tree::documents() const {
  std::vector<Node> out;
  for (auto index : documents_) out.push_back(Node(this, index));
  return out;
}

namespace {

// An istream over the text without copying it (std::istringstream would copy the whole file).
class ViewBuf : public std::streambuf {
 public:
  explicit ViewBuf(std::string_view text) {
    char* p = const_cast<char*>(text.data());  // read only: the get area is never written
    setg(p, p, p + text.size());
  }
};

}  // namespace

class Builder : public YAML::EventHandler {
 public:
  struct Stop {};  // enough documents: the rest of the stream is not needed

  Builder(Tree& tree, const Limits& limits, std::string_view text)
      : tree_(tree), limits_(limits), text_(text) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (tree_.documents_.size() >= limits_.max_documents) throw Stop{};
    // yaml-cpp 0.7 starts a document at a stray ',' without reading it, and again, for ever
    // (yaml-cpp #1040): each empty document takes memory until the process dies. A one-byte
    // RLS file did that (found by tests/fuzz/config_fuzz.cpp). A document starts past the last.
    if (mark.pos == last_start_) {
      const auto at = static_cast<std::size_t>(mark.pos);
      const std::string what =
          at < text_.size() ? "'" + std::string(1, text_[at]) + "'" : std::string("end of input");
      throw ParseError(line_of(mark), true, "unexpected " + what + " (no document starts here)");
    }
    last_start_ = mark.pos;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    leaf(new_entry(Type::kNull, mark, 0, 0), anchor, 1);
  }

  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    const auto begin = static_cast<std::uint32_t>(tree_.text_.size());
    tree_.text_ += value;
    leaf(new_entry(Type::kScalar, mark, begin, static_cast<std::uint32_t>(value.size())), anchor,
         1 + value.size());
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor >= anchors_.size() || !anchors_[anchor].done) {
      // yaml-cpp accepts `&a [*a]`; a node that contains itself has no finite expansion.
      fail(line_of(mark),
           "an alias names the collection it is part of; a config cannot contain "
           "itself");
    }
    const Anchored& a = anchors_[anchor];
    append(a.index, a.weight, line_of(mark));
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(Type::kSequence, mark, anchor);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(Type::kMap, mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    std::uint32_t index;
    std::size_t pending_start;  // where its children begin in pending_
    std::size_t expanded_at;    // expanded_ before it opened
    YAML::anchor_t anchor;
  };
  struct Anchored {
    std::uint32_t index = 0;
    std::size_t weight = 0;  // the nodes and scalar bytes it stands for, expanded
    bool done = false;
  };

  static int line_of(const YAML::Mark& mark) { return std::max(mark.line, 0) + 1; }

  [[noreturn]] static void fail(int line, const std::string& message) {
    throw ParseError(line, false, message);
  }

  std::uint32_t new_entry(Type type, const YAML::Mark& mark, std::uint32_t begin,
                          std::uint32_t count) {
    tree_.entries_.push_back(
        Tree::Entry{type, static_cast<std::uint32_t>(line_of(mark)), begin, count});
    return static_cast<std::uint32_t>(tree_.entries_.size() - 1);
  }

  void remember(YAML::anchor_t anchor, std::uint32_t index, std::size_t weight, bool done) {
    if (anchor == YAML::NullAnchor) return;
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
    anchors_[anchor] = Anchored{index, weight, done};
  }

  void leaf(std::uint32_t index, YAML::anchor_t anchor, std::size_t weight) {
    remember(anchor, index, weight, true);
    append(index, weight, static_cast<int>(tree_.entries_[index].line));
  }

  // Makes `index` the next child of the open collection, or a document's root. `weight` is
  // what it adds to the expanded size: itself, or all an alias stands for.
  void append(std::uint32_t index, std::size_t weight, int line) {
    expanded_ += weight;
    if (expanded_ > limits_.max_expanded) {
      fail(line, "aliases expand this config past its size limit (" +
                     std::to_string(limits_.max_expanded) +
                     " nodes and bytes of text once every alias is written out); use fewer "
                     "aliases");
    }
    if (stack_.empty()) {
      tree_.documents_.push_back(index);
    } else {
      pending_.push_back(index);
    }
  }

  void open(Type type, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (stack_.size() >= limits_.max_depth) {
      fail(line_of(mark), "nested deeper than " + std::to_string(limits_.max_depth) +
                              " levels; a config needs far fewer");
    }
    const std::uint32_t index = new_entry(type, mark, 0, 0);
    remember(anchor, index, 0, false);
    stack_.push_back(Frame{index, pending_.size(), expanded_, anchor});
  }

  void close() {
    const Frame f = stack_.back();
    stack_.pop_back();
    Tree::Entry& e = tree_.entries_[f.index];
    const auto first = pending_.begin() + static_cast<std::ptrdiff_t>(f.pending_start);
    const std::size_t n = static_cast<std::size_t>(pending_.end() - first);
    e.begin = static_cast<std::uint32_t>(tree_.kids_.size());
    e.count = static_cast<std::uint32_t>(e.type == Type::kMap ? n / 2 : n);
    tree_.kids_.insert(tree_.kids_.end(), first, pending_.end());
    pending_.resize(f.pending_start);
    // Its children were counted as they came; append() counts them again with the node.
    const std::size_t weight = 1 + expanded_ - f.expanded_at;
    expanded_ = f.expanded_at;
    remember(f.anchor, f.index, weight, true);
    append(f.index, weight, static_cast<int>(e.line));
  }

  Tree& tree_;
  const Limits& limits_;
  std::vector<Frame> stack_;
  std::vector<std::uint32_t> pending_;  // children of the open collections, innermost last
  std::vector<Anchored> anchors_;
  std::size_t expanded_ = 0;
  std::string_view text_;
  int last_start_ = -1;  // where the previous document started
};

Tree parse(std::string_view text, const Limits& limits) {
  Tree tree;
  ViewBuf buf(text);
  std::istream in(&buf);
  Builder builder(tree, limits, text);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const Builder::Stop&) {
  } catch (const YAML::Exception& e) {
    throw ParseError(std::max(e.mark.line, 0) + 1, true, e.msg);
  }
  return tree;
}

}  // namespace sluice::config::yaml
