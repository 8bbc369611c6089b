// What a training run leaves in its output directory besides checkpoints: the metrics of
// every epoch (metrics.csv and metrics.json) and a picture of the curves (curves.svg: the
// training loss along the steps, train and test accuracy by epoch). Plain text formats,
// written atomically (a temporary name, then rename).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct EpochMetrics {
  int epoch = 0;
  double train_loss = 0, train_accuracy = 0, test_accuracy = 0, seconds = 0, images_per_second = 0;
};

struct History {
  std::vector<EpochMetrics> epochs;
  // (global step, mean training loss of the `loss_every` steps of one epoch ending there)
  std::vector<std::pair<double, double>> step_loss;
  int loss_every = 20;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

inline std::string metrics_csv(const History& h) {
  std::ostringstream s;
  s << "epoch,train_loss,train_accuracy,test_accuracy,seconds,images_per_second\n";
  for (const auto& e : h.epochs) {
    char line[200];
    std::snprintf(line, sizeof line, "%d,%.6f,%.6f,%.6f,%.3f,%.1f\n", e.epoch, e.train_loss,
                  e.train_accuracy, e.test_accuracy, e.seconds, e.images_per_second);
    s << line;
  }
  return s.str();
}

inline std::string metrics_json(const History& h) {
  std::ostringstream s;
  s << "{\"epochs\": [";
  for (size_t i = 0; i < h.epochs.size(); ++i) {
    const auto& e = h.epochs[i];
    char item[300];
    std::snprintf(item, sizeof item,
                  "%s\n  {\"epoch\": %d, \"train_loss\": %.6f, \"train_accuracy\": %.6f, "
                  "\"test_accuracy\": %.6f, \"seconds\": %.3f, \"images_per_second\": %.1f}",
                  i ? "," : "", e.epoch, e.train_loss, e.train_accuracy, e.test_accuracy, e.seconds,
                  e.images_per_second);
    s << item;
  }
  s << "\n], \"loss_every_steps\": " << h.loss_every << ", \"step_loss\": [";
  for (size_t i = 0; i < h.step_loss.size(); ++i) {
    char v[64];
    std::snprintf(v, sizeof v, "%s[%.0f, %.5f]", i ? ", " : "", h.step_loss[i].first, h.step_loss[i].second);
    s << v;
  }
  s << "]}\n";
  return s.str();
}

// One panel of the SVG: a polyline per series over [x0, x1] x [y0, y1], with axes, ticks and
// labels. Series: (points, colour, legend).
struct Series {
  std::vector<std::pair<double, double>> points;
  std::string colour, legend;
};

inline std::string svg_panel(double left, double top, double width, double height,
                             const std::string& title, const std::string& xlabel,
                             const std::vector<Series>& series, double y0, double y1,
                             double x0, double x1) {
  std::ostringstream s;
  auto px = [&](double x) { return left + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * width; };
  auto py = [&](double y) { return top + height - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * height; };
  s << "<text x=\"" << left + width / 2 << "\" y=\"" << top - 12
    << "\" text-anchor=\"middle\" font-size=\"15\">" << title << "</text>\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << width << "\" height=\"" << height
    << "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    double y = y0 + (y1 - y0) * i / 4.0, x = x0 + (x1 - x0) * i / 4.0;
    char ylab[32], xlab[32];
    std::snprintf(ylab, sizeof ylab, "%.3g", y);
    std::snprintf(xlab, sizeof xlab, "%.3g", x);
    s << "<line x1=\"" << left << "\" x2=\"" << left + width << "\" y1=\"" << py(y) << "\" y2=\""
      << py(y) << "\" stroke=\"#ddd\"/>\n";
    s << "<text x=\"" << left - 6 << "\" y=\"" << py(y) + 4
      << "\" text-anchor=\"end\" font-size=\"11\">" << ylab << "</text>\n";
    s << "<text x=\"" << px(x) << "\" y=\"" << top + height + 16
      << "\" text-anchor=\"middle\" font-size=\"11\">" << xlab << "</text>\n";
  }
  s << "<text x=\"" << left + width / 2 << "\" y=\"" << top + height + 34
    << "\" text-anchor=\"middle\" font-size=\"12\">" << xlabel << "</text>\n";
  double legend_y = top + 16;
  for (const Series& ser : series) {
    if (ser.points.empty()) continue;
    s << "<polyline fill=\"none\" stroke=\"" << ser.colour << "\" stroke-width=\"2\" points=\"";
    for (auto [x, y] : ser.points) s << px(x) << "," << py(y) << " ";
    s << "\"/>\n";
    if (ser.points.size() <= 30)
      for (auto [x, y] : ser.points)
        s << "<circle cx=\"" << px(x) << "\" cy=\"" << py(y) << "\" r=\"3\" fill=\"" << ser.colour
          << "\"/>\n";
    s << "<text x=\"" << left + width - 8 << "\" y=\"" << legend_y << "\" text-anchor=\"end\" "
      << "font-size=\"12\" fill=\"" << ser.colour << "\">" << ser.legend << "</text>\n";
    legend_y += 16;
  }
  return s.str();
}

inline std::string curves_svg(const History& h, const std::string& title) {
  Series loss{{}, "#1f77b4", "training loss"};
  loss.points = h.step_loss;
  Series train{{}, "#ff7f0e", "train accuracy"}, test{{}, "#2ca02c", "test accuracy"};
  double lo = 1, hi = 0;
  for (const auto& e : h.epochs) {
    train.points.emplace_back(e.epoch, e.train_accuracy);
    test.points.emplace_back(e.epoch, e.test_accuracy);
    lo = std::min({lo, e.train_accuracy, e.test_accuracy});
    hi = std::max({hi, e.train_accuracy, e.test_accuracy});
  }
  double max_loss = 0;
  for (auto [step, v] : h.step_loss) max_loss = std::max(max_loss, v);
  double last_step = loss.points.empty() ? 1 : loss.points.back().first;
  double first_epoch = h.epochs.empty() ? 0 : h.epochs.front().epoch;
  double last_epoch = h.epochs.empty() ? 1 : h.epochs.back().epoch;
  if (first_epoch == last_epoch) first_epoch -= 1;
  lo = std::floor(lo * 20) / 20, hi = std::min(1.0, std::ceil(hi * 20) / 20);
  if (hi <= lo) hi = lo + 0.05;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"380\" "
       "font-family=\"sans-serif\">\n<rect width=\"900\" height=\"380\" fill=\"white\"/>\n";
  s << "<text x=\"450\" y=\"22\" text-anchor=\"middle\" font-size=\"16\">" << title << "</text>\n";
  s << svg_panel(70, 70, 360, 240, "training loss", "step", {loss}, 0, max_loss > 0 ? max_loss : 1, 0,
                 last_step);
  s << svg_panel(520, 70, 360, 240, "accuracy", "epoch", {train, test}, lo, hi, first_epoch, last_epoch);
  s << "</svg>\n";
  return s.str();
}
