// Loading configs (sluice/config/loader.hpp): a file's text, the RLS files a config names,
// every error at its own file and line, the checks after the reading.
#include "sluice/config/loader.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "readers.hpp"

namespace sluice::config {

using internal::check_all;
using internal::describe;
using internal::Errors;
using internal::line_of;
using internal::Origins;
using internal::quoted;

namespace {

// The text of a file, or the error that names it.
std::optional<ConfigError> read_file(const std::string& path, std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  int error = f == nullptr ? errno : 0;
  if (f != nullptr) {
    char buf[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    if (std::ferror(f)) error = errno;
    std::fclose(f);
  }
  if (error == 0) return std::nullopt;
  return ConfigError{path, 0, std::string("cannot read: ") + std::strerror(error)};
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
                    const std::vector<std::string>& extra, std::vector<ConfigError>& errors) {
  std::vector<std::string> paths;
  if (rules.rls) {
    for (const auto& f : rules.rls->files) paths.push_back(beside(config_file, f));
  }
  paths.insert(paths.end(), extra.begin(), extra.end());
  if (paths.empty()) return;
  if (!rules.rls) rules.rls.emplace();
  for (const auto& path : paths) {
    std::string text;
    if (auto e = read_file(path, text)) {
      errors.push_back(*e);
      continue;
    }
    RlsLoaded loaded = load_rls_text(text, path);
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
                        const std::vector<std::string>& rls_files) {
  Errors errors;
  RuleSet rs;
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml));
    if (docs.empty() || docs.front().IsNull()) {
      errors.add(1,
                 "the file is empty; a config is a mapping of fields such as listen, routes "
                 "and rules (see docs/configuration.md)");
    } else if (!docs.front().IsMap()) {
      errors.add(line_of(docs.front()),
                 "a config is a mapping of fields such as listen, routes and rules, got " +
                     describe(docs.front()));
    } else {
      Origins origins;
      rs = read_config(docs.front(), errors, origins);
      check_all(rs, origins, errors);
    }
    if (docs.size() > 1) {
      errors.add(line_of(docs[1]),
                 "a second YAML document starts here (after '---'); a config is one document");
    }
  } catch (const YAML::Exception& e) {
    errors.add(line_of(e.mark), "YAML syntax: " + e.msg);
  }
  Loaded out;
  out.errors = std::move(errors).located(file_name);
  read_rls_files(rs, file_name, rls_files, out.errors);
  if (out.errors.empty()) out.rules = std::move(rs);
  return out;
}

Loaded load_config_file(const std::string& path, const std::vector<std::string>& rls_files) {
  std::string text;
  if (auto e = read_file(path, text)) return Loaded{std::nullopt, {*e}};
  return load_config_text(text, path, rls_files);
}

Loaded load_any_file(const std::string& path) {
  std::string text;
  if (auto e = read_file(path, text)) return Loaded{std::nullopt, {*e}};
  bool rls = false;
  try {
    const YAML::Node doc = YAML::Load(text);
    rls = doc.IsMap() && doc["domain"];
  } catch (const YAML::Exception&) {
    // not YAML: the main config's reader says where and why
  }
  return rls ? load_rls_files({path}) : load_config_text(text, path);
}

Loaded load_rls_files(const std::vector<std::string>& paths) {
  Loaded out;
  RuleSet rs;
  read_rls_files(rs, "", paths, out.errors);
  if (out.errors.empty()) out.rules = std::move(rs);
  return out;
}

RlsLoaded load_rls_text(std::string_view yaml, const std::string& file_name) {
  Errors errors;
  RlsLoaded out;
  try {
    for (const YAML::Node& doc : YAML::LoadAll(std::string(yaml))) {
      if (auto d = internal::read_rls_domain(doc, errors)) {
        d->file = file_name;
        out.domains.push_back(std::move(*d));
      }
    }
  } catch (const YAML::Exception& e) {
    errors.add(line_of(e.mark), "YAML syntax: " + e.msg);
  }
  for (std::size_t i = 0; i < out.domains.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (out.domains[i].name != out.domains[j].name) continue;
      errors.add(out.domains[i].line, "domain " + quoted(out.domains[i].name) +
                                          " defined twice (first at " + file_name + ":" +
                                          std::to_string(out.domains[j].line) + ")");
      break;
    }
  }
  out.errors = std::move(errors).located(file_name);
  if (!out.errors.empty()) out.domains.clear();
  return out;
}

}  // namespace sluice::config
