#pragma once

// The timeline page (audit/web/), embedded at build time (audit/embed_web.cmake).

#include <string_view>
#include <vector>

namespace cronledger::audit {

struct WebAsset {
  std::string_view name;          // "index.html", "app.js", "style.css"
  std::string_view content_type;  // e.g. "text/html; charset=utf-8"
  std::string_view bytes;
};

const std::vector<WebAsset>& WebAssets();

}  // namespace cronledger::audit
