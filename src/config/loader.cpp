// Loading configs (sluice/config/loader.hpp): a file's text under the size cap, the RLS files a
// config names, every error at its own file and line, the checks after the reading.
#include "sluice/config/loader.hpp"

#include <limits>
#include <map>

#include "readers.hpp"
#include "yaml_tree.hpp"

namespace sluice::config {

using internal::check_all;
using internal::describe;
using internal::Errors;
using internal::line_of;
using internal::Origins;
using internal::quoted;

namespace {

// The text of a file under the size cap, or the error that names it.
std::optional<ConfigError> read_file(const std::string& path, std::size_t max_size,
                                     std::string& text) {
  auto read = read_config_file(path, max_size);
  if (!read) return ConfigError{path, 0, read.error()};
  text = std::move(read).value();
  return std::nullopt;
}

// A file the config names, relative to the config's own folder.
std::string beside(const std::string& config_file, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  const auto slash = config_file.rfind('/');
  return slash == std::string::npos ? path : config_file.substr(0, slash + 1) + path;
}

// The domains of the RLS files (the config's `rls.files`, then `extra`) into `rules`, each error
// at its own file and line; a domain defined twice anywhere is refused.
void read_rls_files(RuleSet& rules, const std::string& config_file,
                    const std::vector<std::string>& extra, std::size_t max_size,
                    std::vector<ConfigError>& errors) {
  std::vector<std::string> paths;
  if (rules.rls) {
    for (const auto& f : rules.rls->files) paths.push_back(beside(config_file, f));
  }
  paths.insert(paths.end(), extra.begin(), extra.end());
  if (paths.empty()) return;
  if (!rules.rls) rules.rls.emplace();
  for (const auto& path : paths) {
    std::string text;
    if (auto e = read_file(path, max_size, text)) {
      errors.push_back(*e);
      continue;
    }
    RlsLoaded loaded = load_rls_text(text, path, max_size);
    errors.insert(errors.end(), loaded.errors.begin(), loaded.errors.end());
    for (auto& d : loaded.domains) rules.rls->domains.push_back(std::move(d));
  }
  std::map<std::string, const RlsDomain*, std::less<>> first;
  for (const auto& d : rules.rls->domains) {
    auto [it, fresh] = first.emplace(d.name, &d);
    if (fresh) continue;
    const std::string where = it->second->file.empty() ? config_file : it->second->file;
    errors.push_back({d.file.empty() ? config_file : d.file, d.line,
                      "domain " + quoted(d.name) + " defined twice (first at " + where + ":" +
                          std::to_string(it->second->line) + ")"});
  }
}

}  // namespace

Loaded load_config_text(std::string_view yaml, const std::string& file_name,
                        const std::vector<std::string>& rls_files, std::size_t max_size) {
  Errors errors;
  RuleSet rs;
  try {
    yaml::Limits limits;
    limits.max_expanded = max_size;
    const yaml::Tree tree = yaml::parse(yaml, limits);
    const std::vector<yaml::Node> docs = tree.documents();
    if (docs.empty() || docs.front().is_null()) {
      errors.add(1,
                 "the file is empty; a config is a mapping of fields such as listen, routes "
                 "and rules (see docs/configuration.md)");
    } else if (!docs.front().is_map()) {
      errors.add(line_of(docs.front()),
                 "a config is a mapping of fields such as listen, routes and rules, got " +
                     describe(docs.front()));
    } else {
      Origins origins;
      rs = internal::read_config(docs.front(), errors, origins);
      check_all(rs, origins, errors);
    }
    if (docs.size() > 1) {
      errors.add(line_of(docs[1]),
                 "a second YAML document starts here (after '---'); a config is one document");
    }
  } catch (const yaml::ParseError& e) {
    errors.add(e.line(), (e.syntax() ? "YAML syntax: " : "") + std::string(e.what()));
  }
  Loaded out;
  out.errors = std::move(errors).located(file_name);
  read_rls_files(rs, file_name, rls_files, max_size, out.errors);
  if (out.errors.empty()) out.rules = std::move(rs);
  return out;
}

Loaded load_config_file(const std::string& path, const std::vector<std::string>& rls_files,
                        std::size_t max_size) {
  std::string text;
  if (auto e = read_file(path, max_size, text)) return Loaded{std::nullopt, {*e}};
  return load_config_text(text, path, rls_files, max_size);
}

Loaded load_any_file(const std::string& path, std::size_t max_size) {
  std::string text;
  if (auto e = read_file(path, max_size, text)) return Loaded{std::nullopt, {*e}};
  bool rls = false;
  try {
    yaml::Limits limits;
    limits.max_expanded = max_size;
    const yaml::Tree tree = yaml::parse(text, limits);
    rls = tree.root().is_map() && tree.root().find("domain");
  } catch (const yaml::ParseError&) {
    // not YAML: the main config's reader says where and why
  }
  return rls ? load_rls_files({path}, max_size) : load_config_text(text, path, {}, max_size);
}

Loaded load_rls_files(const std::vector<std::string>& paths, std::size_t max_size) {
  Loaded out;
  RuleSet rs;
  read_rls_files(rs, "", paths, max_size, out.errors);
  if (out.errors.empty()) out.rules = std::move(rs);
  return out;
}

RlsLoaded load_rls_text(std::string_view yaml, const std::string& file_name, std::size_t max_size) {
  Errors errors;
  RlsLoaded out;
  try {
    yaml::Limits limits;
    limits.max_expanded = max_size;
    limits.max_documents = std::numeric_limits<std::size_t>::max();  // one domain each
    const yaml::Tree tree = yaml::parse(yaml, limits);
    for (const yaml::Node& doc : tree.documents()) {
      if (auto d = internal::read_rls_domain(doc, errors)) {
        d->file = file_name;
        out.domains.push_back(std::move(*d));
      }
    }
  } catch (const yaml::ParseError& e) {
    errors.add(e.line(), (e.syntax() ? "YAML syntax: " : "") + std::string(e.what()));
  }
  std::map<std::string_view, int> first_line;  // a file may hold many domains
  for (const RlsDomain& d : out.domains) {
    const auto [it, fresh] = first_line.emplace(d.name, d.line);
    if (fresh) continue;
    errors.add(d.line, "domain " + quoted(d.name) + " defined twice (first at " + file_name + ":" +
                           std::to_string(it->second) + ")");
  }
  out.errors = std::move(errors).located(file_name);
  if (!out.errors.empty()) out.domains.clear();
  return out;
}

}  // namespace sluice::config
