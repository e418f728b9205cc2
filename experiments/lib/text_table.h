// A plain text table for terminal reports: an optional row of group
// titles spanning columns ("--- wakeup latency (us) ---"), a header row and
// data rows. Columns are sized to their widest cell and separated by two
// spaces; cells are right-aligned unless the column is marked left.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace schedlab {

// A plain text table: a row of group titles spanning columns (optional),
// a header row, data rows. Columns are sized to their widest cell and
// separated by two spaces; numbers are right-aligned.
class TextTable {
 public:
  struct Column {
    std::string header;
    bool left = false;
  };
  void add_span(std::string title, int columns) { spans_.push_back({std::move(title), columns}); }
  void add_column(std::string header, bool left = false) { columns_.push_back({std::move(header), left}); }
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

  std::string render() const {
    const size_t n = columns_.size();
    std::vector<size_t> width(n, 0);
    for (size_t c = 0; c < n; ++c) width[c] = columns_[c].header.size();
    for (const auto& row : rows_)
      for (size_t c = 0; c < n && c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    // Widen the columns of a span whose title (with a space each side)
    // does not fit, evenly.
    {
      size_t c = 0;
      for (const auto& s : spans_) {
        size_t end = std::min(n, c + static_cast<size_t>(s.columns));
        if (!s.title.empty() && end > c) {
          size_t w = span_width(width, c, end);
          const size_t need = s.title.size() + 2;
          if (w < need) {
            const size_t extra = need - w, k = end - c;
            for (size_t i = c; i < end; ++i) width[i] += extra / k + ((end - i) <= extra % k ? 1 : 0);
          }
        }
        c = end;
      }
    }
    std::string out;
    if (!spans_.empty()) {
      std::string line;
      size_t c = 0;
      for (const auto& s : spans_) {
        size_t end = std::min(n, c + static_cast<size_t>(s.columns));
        if (end == c) break;
        if (c > 0) line += "  ";
        size_t w = span_width(width, c, end);
        line += center(s.title, w);
        c = end;
      }
      out += rtrim(line) + '\n';
    }
    std::vector<std::string> header;
    for (const auto& col : columns_) header.push_back(col.header);
    out += format_row(header, width) + '\n';
    for (const auto& row : rows_) out += format_row(row, width) + '\n';
    return out;
  }

 private:
  struct Span {
    std::string title;
    int columns;
  };
  static size_t span_width(const std::vector<size_t>& width, size_t begin, size_t end) {
    size_t w = 0;
    for (size_t c = begin; c < end; ++c) w += width[c];
    return w + 2 * (end - begin - 1);
  }
  // A title centered in dashes over its columns ("-- wakeup latency (us) --").
  static std::string center(const std::string& title, size_t w) {
    if (title.empty()) return std::string(w, ' ');
    const std::string t = " " + title + " ";
    const size_t left = (w - std::min(w, t.size())) / 2;
    const size_t right = w - std::min(w, t.size()) - left;
    return std::string(left, '-') + t + std::string(right, '-');
  }
  static std::string rtrim(std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }
  std::string format_row(const std::vector<std::string>& cells, const std::vector<size_t>& width) const {
    std::string line;
    for (size_t c = 0; c < width.size(); ++c) {
      if (c > 0) line += "  ";
      const std::string cell = c < cells.size() ? cells[c] : std::string();
      if (columns_[c].left)
        line += fmt::format("{:<{}}", cell, width[c]);
      else
        line += fmt::format("{:>{}}", cell, width[c]);
    }
    return rtrim(line);
  }

  std::vector<Span> spans_;
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace schedlab
