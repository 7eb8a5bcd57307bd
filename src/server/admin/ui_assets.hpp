// The dashboard's files (src/server/admin/ui/), built into the binary by embed_ui.cmake so
// that `sluice serve` needs nothing on disk to serve /ui/.
#pragma once

#include <span>
#include <string_view>

namespace sluice::server {

struct UiAsset {
  std::string_view name;  // "index.html", "app.js"
  std::string_view content_type;
  std::string_view data;
};

std::span<const UiAsset> ui_assets();

}  // namespace sluice::server
