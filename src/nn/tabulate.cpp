// nn::tabulate's table (flax.linen.summary): one row per module call of an init, in call
// order, with the module's own variables per collection, then the totals.
#include <algorithm>
#include <sstream>

#include "jx/nn/module.h"
#include "nn/root_state.h"
#include "support/str.h"

namespace jx::nn::detail {
namespace {

// 1,234,567
std::string grouped(uint64_t n) {
  std::string d = std::to_string(n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

// flax's _bytes_repr: "160 B", "1.2 KB", "4.5 MB".
std::string bytes_repr(uint64_t b) {
  auto one = [](double v) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(1);
    os << v;
    return os.str();
  };
  if (b > 1000000000) return one(double(b) / 1e9) + " GB";
  if (b > 1000000) return one(double(b) / 1e6) + " MB";
  if (b > 1000) return one(double(b) / 1e3) + " KB";
  return grouped(b) + " B";
}

struct Count {
  uint64_t n = 0, bytes = 0;
};

// The arrays stored directly at `path` in `col` (not in submodules), as "name: type" lines.
std::vector<std::string> own_variables(const Tree& vars, const std::string& col,
                                       const std::vector<std::string>& path, Count& c) {
  std::vector<std::string> lines;
  if (!vars.contains(col)) return lines;
  const Tree* t = &vars.at(col);
  for (const std::string& p : path) {
    if (!t->is_dict() || !t->contains(p)) return lines;
    t = &t->at(p);
  }
  if (!t->is_dict()) return lines;
  for (size_t i = 0; i < t->size(); ++i) {
    const Tree& v = t->children()[i];
    if (!v.is_leaf()) continue;
    const Array& a = v.array();
    lines.push_back(str(t->keys()[i], ": ", describe_value(a)));
    c.n += uint64_t(a.size());
    c.bytes += uint64_t(a.nbytes());
  }
  return lines;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> r;
  std::string cur;
  for (char ch : s) {
    if (ch == '\n') {
      r.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty() || r.empty()) r.push_back(cur);
  return r;
}

// Display width of UTF-8 text (box characters count one).
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char ch : s) w += (ch & 0xC0) != 0x80;
  return w;
}

std::string repeat(const std::string& s, size_t n) {
  std::string r;
  for (size_t i = 0; i < n; ++i) r += s;
  return r;
}

}  // namespace

std::string format_table(const RootState& root) {
  std::vector<std::string> cols;
  for (const std::string& c : root.variables.keys()) cols.push_back(c);
  std::vector<std::string> header{"path", "module", "inputs", "outputs"};
  header.insert(header.end(), cols.begin(), cols.end());
  // Each row: one cell per column, each cell some lines.
  std::vector<std::vector<std::vector<std::string>>> rows;
  std::vector<Count> totals(cols.size());
  for (const CallRecord& r : root.records) {
    std::string path;
    for (const std::string& p : r.path) path += (path.empty() ? "" : "/") + p;
    std::vector<std::vector<std::string>> row{{path}, {r.type}, split_lines(r.inputs), split_lines(r.outputs)};
    for (size_t c = 0; c < cols.size(); ++c) {
      Count n;
      std::vector<std::string> lines = own_variables(root.variables, cols[c], r.path, n);
      if (!lines.empty()) {
        lines.push_back("");
        lines.push_back(str(grouped(n.n), " (", bytes_repr(n.bytes), ")"));
      }
      totals[c].n += n.n;
      totals[c].bytes += n.bytes;
      row.push_back(lines);
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::vector<std::string>> total_row{{""}, {""}, {""}, {"Total"}};
  for (const Count& t : totals) total_row.push_back({str(grouped(t.n), " (", bytes_repr(t.bytes), ")")});

  std::vector<size_t> w(header.size(), 0);
  auto fit = [&](const std::vector<std::vector<std::string>>& row) {
    for (size_t c = 0; c < row.size(); ++c)
      for (const std::string& line : row[c]) w[c] = std::max(w[c], width(line));
  };
  for (size_t c = 0; c < header.size(); ++c) w[c] = width(header[c]);
  for (const auto& r : rows) fit(r);
  fit(total_row);

  auto rule = [&](const char* l, const char* m, const char* r, const char* h) {
    std::string s = l;
    for (size_t c = 0; c < w.size(); ++c) s += repeat(h, w[c] + 2) + (c + 1 < w.size() ? m : r);
    return s + "\n";
  };
  auto line = [&](const std::vector<std::vector<std::string>>& row, const char* bar, bool right_last) {
    size_t height = 1;
    for (const auto& cell : row) height = std::max(height, cell.size());
    std::string s;
    for (size_t k = 0; k < height; ++k) {
      s += bar;
      for (size_t c = 0; c < w.size(); ++c) {
        const std::string text = k < row[c].size() ? row[c][k] : "";
        const std::string pad(w[c] - width(text), ' ');
        s += ' ';
        s += right_last && c == 3 ? pad : text;
        s += right_last && c == 3 ? text : pad;
        s += ' ';
        s += bar;
      }
      s += "\n";
    }
    return s;
  };
  std::ostringstream os;
  os << rule("┏", "┳", "┓", "━");
  std::vector<std::vector<std::string>> hrow;
  for (const std::string& h : header) hrow.push_back({h});
  os << line(hrow, "┃", false);
  os << rule("┡", "╇", "┩", "━");
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i) os << rule("├", "┼", "┤", "─");
    os << line(rows[i], "│", false);
  }
  os << rule("├", "┼", "┤", "─");
  os << line(total_row, "│", true);
  os << rule("└", "┴", "┘", "─");
  Count all;
  for (const Count& t : totals) {
    all.n += t.n;
    all.bytes += t.bytes;
  }
  os << "\nTotal Parameters: " << grouped(all.n) << " (" << bytes_repr(all.bytes) << ")\n";
  return os.str();
}

}  // namespace jx::nn::detail
