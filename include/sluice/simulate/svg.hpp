// A minimal SVG writer for the report's plots: shapes, text and a plotting frame with axes and
// "nice" ticks. Plain SVG that any browser or image viewer shows, no script; the inline form
// carries no namespace URL, so a report holds no external reference at all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::simulate::svg {

// Every plot's layout: its width, the margin left of the frame (for the y labels), the frame's
// width, and the height of a legend line.
inline constexpr int kWidth = 860;
inline constexpr double kLeft = 64;
inline constexpr double kPlotWidth = kWidth - kLeft - 20;
inline constexpr double kLegendLine = 18;

inline double seconds(std::int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

// Text for XML content and attribute values.
std::string escape(std::string_view text);

// A number for coordinates: at most 2 decimals, no trailing zeros.
std::string num(double v);

// Round steps (1, 2, 5 × 10^k) from 0 up to at least `max`, about `target` of them.
std::vector<double> ticks(double max, int target);

// A colour-blind-safe palette (Okabe and Ito), cycled.
std::string_view colour(std::size_t i);

class Canvas {
 public:
  // `standalone`: a file of its own (an XML declaration's worth: the namespace, a white
  // background); else inline in HTML.
  Canvas(int width, int height, bool standalone, std::string_view title);

  void rect(double x, double y, double w, double h, std::string_view fill);
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
            std::string_view dash = "");
  void path(std::string_view d, std::string_view stroke, std::string_view fill, double width,
            std::string_view dash = "");
  void text(double x, double y, std::string_view s, std::string_view anchor = "start",
            int size = 12, std::string_view fill = "#333");

  std::string finish();

 private:
  std::string out_;
};

// A plotting area: data (x from 0 to x_max, y from 0 to y_max) mapped onto a rectangle of the
// canvas, y up.
class Frame {
 public:
  Frame(double left, double top, double width, double height, double x_max, double y_max);

  double x(double v) const { return left_ + v / x_max_ * width_; }
  double y(double v) const { return top_ + height_ - v / y_max_ * height_; }

  // Grid lines at the ticks, y labels on the left, x labels below when `x_labels`.
  void axes(Canvas& c, const std::vector<double>& xs, const std::vector<double>& ys,
            bool x_labels) const;

  // A line through per-bucket values (bucket i spans [i·step, (i+1)·step)): `stepped`, flat
  // across each bucket; else straight from (0, 0) through each bucket's end (a running total).
  // `closed`: down to y = 0 and back, for an area. A NaN value ends the line there.
  std::string trace(const std::vector<double>& values, double step, bool stepped,
                    bool closed) const;

 private:
  double left_, top_, width_, height_, x_max_, y_max_;
};

// A legend entry: a swatch (box, line or dashed line) and its text.
struct LegendEntry {
  std::string_view colour;
  std::string text;
  char kind;  // 'b' box, 'l' line, 'd' dashed line, '-' text only
};

// Lines a legend takes when it wraps at `width`; one drawn from (left, y), 18 px a line.
int legend_lines(const std::vector<LegendEntry>& entries, double width);
void legend(Canvas& c, double left, double width, double y,
            const std::vector<LegendEntry>& entries);

}  // namespace sluice::simulate::svg
