/* eval_svg.c — the actual-vs-predicted plot as hand-written SVG: log-log
 * axes with decade ticks, the y = x line, a shaded +-10% band, one colour
 * per group (family) with a legend. Plain text, opens in any browser. */
#include "eval.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define W 640
#define HT 560
#define ML 80   /* margins */
#define MR 170
#define MT 40
#define MB 60

static const char *const COLORS[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

static void xml_text(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

dlp_status dlp_svg_scatter(const char *path, const char *title,
                           const char *unit, const double *actual,
                           const double *pred, const int *group,
                           const char *const *names, int n_groups, int n,
                           dlp_error *err) {
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (!(actual[i] > 0) || !(pred[i] > 0) || !isfinite(pred[i])) continue;
        double a = fmin(actual[i], pred[i]), b = fmax(actual[i], pred[i]);
        if (a < lo) lo = a;
        if (b > hi) hi = b;
    }
    if (!isfinite(lo)) { lo = 1; hi = 10; }
    double l0 = floor(log10(lo) * 4) / 4 - 0.05, l1 = ceil(log10(hi) * 4) / 4 + 0.05;
    if (l1 - l0 < 0.5) { l0 -= 0.25; l1 += 0.25; }
    FILE *f = fopen(path, "w");
    if (!f) return dlp_fail(err, DLP_ERR_IO, "cannot write plot %s", path);
    const double pw = W - ML - MR, ph = HT - MT - MB;
#define PX(v) (ML + (log10(v) - l0) / (l1 - l0) * pw)
#define PY(v) (MT + ph - (log10(v) - l0) / (l1 - l0) * ph)
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n",
            W, HT);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, HT);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"14\">", ML);
    xml_text(f, title);
    fprintf(f, "</text>\n");
    /* +-10% band as a polygon between y = 0.9x and y = 1.1x */
    double a0 = pow(10, l0), a1 = pow(10, l1);
    fprintf(f, "<clipPath id=\"c\"><rect x=\"%d\" y=\"%d\" width=\"%g\" "
               "height=\"%g\"/></clipPath>\n<g clip-path=\"url(#c)\">\n",
            ML, MT, pw, ph);
    fprintf(f, "<polygon fill=\"#dddddd\" points=\"%.1f,%.1f %.1f,%.1f "
               "%.1f,%.1f %.1f,%.1f\"/>\n",
            PX(a0), PY(a0 * 1.1), PX(a1), PY(a1 * 1.1), PX(a1), PY(a1 * 0.9),
            PX(a0), PY(a0 * 0.9));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"black\" stroke-width=\"1\"/>\n",
            PX(a0), PY(a0), PX(a1), PY(a1));
    /* the points: one path per colour whose zero-length segments ("M x
     * yh0") a round cap of width 4.4 draws as dots of radius 2.2, about 14
     * bytes a point where a <circle> element took 74 (the 2026-11-27
     * plots of docs/plots: 18 MiB) */
    for (int c = 0; c < 10; c++) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (!(actual[i] > 0) || !(pred[i] > 0) || !isfinite(pred[i])) continue;
            int g = group ? group[i] : 0;
            if ((g < 0 ? 0 : g) % 10 != c) continue;
            if (!k)
                fprintf(f, "<path fill=\"none\" stroke=\"%s\" "
                           "stroke-opacity=\"0.6\" stroke-width=\"4.4\" "
                           "stroke-linecap=\"round\" d=\"", COLORS[c]);
            fprintf(f, "%sM%.1f %.1fh0", k && k % 8 == 0 ? "\n" : "",
                    PX(actual[i]), PY(pred[i]));
            k++;
        }
        if (k) fprintf(f, "\"/>\n");
    }
    fprintf(f, "</g>\n<rect x=\"%d\" y=\"%d\" width=\"%g\" height=\"%g\" "
               "fill=\"none\" stroke=\"black\"/>\n", ML, MT, pw, ph);
    for (int d = (int)ceil(l0); d <= (int)floor(l1); d++) {
        double v = pow(10, d);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" "
                   "stroke=\"black\"/><text x=\"%.1f\" y=\"%g\" "
                   "text-anchor=\"middle\">%g</text>\n",
                PX(v), MT + ph, PX(v), MT + ph + 5, PX(v), MT + ph + 18, v);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                   "stroke=\"black\"/><text x=\"%d\" y=\"%.1f\" "
                   "text-anchor=\"end\">%g</text>\n",
                ML - 5, PY(v), ML, PY(v), ML - 8, PY(v) + 4, v);
    }
    fprintf(f, "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\">actual (",
            ML + pw / 2, HT - 15);
    xml_text(f, unit);
    fprintf(f, ")</text>\n<text x=\"18\" y=\"%g\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 18 %g)\">predicted (", MT + ph / 2,
            MT + ph / 2);
    xml_text(f, unit);
    fprintf(f, ")</text>\n");
    for (int g = 0; g < n_groups && g < 30; g++) {
        double y = MT + 10 + g * 16;
        fprintf(f, "<circle cx=\"%d\" cy=\"%g\" r=\"4\" fill=\"%s\"/><text "
                   "x=\"%d\" y=\"%g\">", W - MR + 15, y, COLORS[g % 10],
                W - MR + 24, y + 4);
        xml_text(f, names && names[g] ? names[g] : "");
        fprintf(f, "</text>\n");
    }
    fprintf(f, "<text x=\"%d\" y=\"%g\" fill=\"#666\">grey: within 10%%</text>\n",
            W - MR + 10, MT + ph);
    fprintf(f, "</svg>\n");
#undef PX
#undef PY
    if (fclose(f) != 0) return dlp_fail(err, DLP_ERR_IO, "cannot write plot %s", path);
    return DLP_OK;
}
