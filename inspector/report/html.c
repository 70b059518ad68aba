#include "report/html.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/blocks.h"
#include "report/tensors.h"
#include "report/text.h"

/* The page: styles and the script that draws it from CULEAK (the two documents), written
 * around them. Only single quotes in the script, so each line is a plain C string. */
static const char page_head[] =
    "<!DOCTYPE html>\n"
    "<html><head><meta charset='utf-8'><title>culeak report</title>\n"
    "<style>\n"
    "html { overflow-y: scroll; }   /* a steady width: the map's scale is taken from it */\n"
    "body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }\n"
    "h1 { font-size: 18px; } h2 { font-size: 15px; margin-top: 24px; }\n"
    "table { border-collapse: collapse; } td, th { padding: 2px 10px; text-align: left; }\n"
    "td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }\n"
    "tr:nth-child(even) { background: #f4f4f4; }\n"
    ".swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; }\n"
    ".picture { display: flex; width: 100%; height: 26px; margin: 2px 0 10px; }\n"
    ".piece { height: 100%; flex: none; box-sizing: border-box; border-right: 1px solid #fff;\n"
    "         overflow: hidden; white-space: nowrap; font-size: 11px; line-height: 26px;\n"
    "         color: #fff; text-indent: 4px; }\n"
    "#map { display: flex; align-items: flex-start; gap: 16px; }\n"
    "#segments { flex: 1; min-width: 0; }\n"
    ".device { display: flex; flex-wrap: wrap; gap: 2px; align-items: flex-start; margin: 4px 0 12px; }\n"
    ".segment { display: flex; flex: none; height: 20px; overflow: hidden; outline: 1px solid #888;\n"
    "           outline-offset: -1px; }\n"
    ".segment.thin { outline: none; }\n"
    ".block { height: 100%; min-width: 0; box-sizing: border-box; cursor: pointer;\n"
    "         border-right: 1px solid #fff; }\n"
    ".inactive { background: #ddd; } .active_pending_free { background: #f0a030; }\n"
    ".unmapped { background: repeating-linear-gradient(45deg, #fff, #fff 3px, #eee 3px,\n"
    "                                                  #eee 6px); }\n"
    ".unattributed { background: #555; } .cached { background: #ccc; color: #222; }\n"
    ".owned { background: #933; }\n"
    ".label { font-size: 11px; color: #555; }\n"
    "#detail { width: 440px; flex: none; position: sticky; top: 8px; max-height: 90vh; overflow: auto;\n"
    "          white-space: pre-wrap; font-family: monospace; background: #f8f8f0; padding: 8px;\n"
    "          min-height: 2em; }\n"
    ".warn { color: #a40; }\n"
    "tr.drill td:first-child { color: #444; }\n"
    ".legend span { margin-right: 14px; }\n"
    "</style></head><body>\n"
    "<h1>culeak: who holds this memory</h1>\n"
    "<div id='totals'></div>\n"
    "<h2>At a glance</h2>\n"
    "<p class='label'>Per device, all of its memory to scale: by category, then by what holds it.</p>\n"
    "<div id='pictures'></div>\n"
    "<h2>Memory by category</h2>\n"
    "<table id='categories'><thead><tr><th>device</th><th>category</th>\n"
    "<th class='n'>bytes</th><th class='n'>storages</th></tr></thead><tbody></tbody></table>\n"
    "<h2>Memory by what holds it</h2>\n"
    "<table id='accounting'><thead><tr><th>device</th><th>held</th>\n"
    "<th class='n'>bytes</th></tr></thead><tbody></tbody></table>\n"
    "<h2>Holders, by what dropping each one alone would free</h2>\n"
    "<p class='label'>Under a holder: where its bytes are (↳), down to the accumulation point\n"
    "where they spread over many objects.</p>\n"
    "<table id='holders'><thead><tr><th>holder</th><th class='n'>retained bytes</th>\n"
    "<th class='n'>reachable bytes</th><th class='n'>storages</th></tr></thead><tbody></tbody>\n"
    "</table>\n"
    "<h2>CUDA segments</h2>\n"
    "<div class='legend label'>each bar is a segment, its width to scale (one scale per device);\n"
    "each box a block, whose holders show beside the map on hover (click to keep them):\n"
    "<span><span class='swatch' style='background: hsl(200, 65%, 50%)'></span>allocated, coloured\n"
    "by its holder</span><span><span class='swatch unattributed'></span>allocated, no tensor\n"
    "known</span><span><span class='swatch owned'></span>allocated, held by torch's C++ (a\n"
    "workspace)</span><span><span class='swatch active_pending_free'></span>freed, awaiting its\n"
    "stream</span><span><span class='swatch inactive'></span>free (cached)</span>\n"
    "<span><span class='swatch unmapped'></span>not mapped (expandable)</span></div>\n"
    "<div id='map'><div id='segments'></div>\n"
    "<div id='detail'>Point at a block to see what holds it; click to keep it here.</div></div>\n"
    "<h2>Warnings</h2>\n"
    "<ul id='warnings'></ul>\n"
    "<script id='culeak-data' type='application/json'>\n";

static const char page_tail[] =
    "\n"
    "</script>\n"
    "<script>\n"
    "'use strict';\n"
    "const data = JSON.parse(document.getElementById('culeak-data').textContent);\n"
    "const summary = data.summary, blocks = data.blocks;\n"
    "function el(tag, attrs, text) {\n"
    "  const e = document.createElement(tag);\n"
    "  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);\n"
    "  if (text !== undefined) e.textContent = text;\n"
    "  return e;\n"
    "}\n"
    "function human(n) {\n"
    "  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];\n"
    "  let u = 0;\n"
    "  while (n >= 1024 && u < 4) { n /= 1024; u++; }\n"
    "  return (u ? n.toFixed(1) : n) + ' ' + units[u];\n"
    "}\n"
    "// A holder is a path's first two steps (its root and the name out of it): history, model.\n"
    "function holderOf(steps) {\n"
    "  return steps.slice(0, 2).map(s => s.text).join('');\n"
    "}\n"
    "// A holder's colour comes from its name: the same in every report.\n"
    "function colour(holder) {\n"
    "  let hash = 0;\n"
    "  for (const c of holder) hash = (hash * 31 + c.codePointAt(0)) >>> 0;\n"
    "  return 'hsl(' + (hash % 360) + ', 65%, 50%)';\n"
    "}\n"
    "const totals = document.getElementById('totals');\n"
    "const head = data.header;\n"
    "totals.append(el('div', {id: 'header'}, head.target + ', ' + head.time +\n"
    "  (head.python ? ', Python ' + head.python : '') + (head.torch ? ', torch ' + head.torch : '')));\n"
    "totals.append(el('div', {}, summary.device.map(d => d.name + ' ' + human(d.bytes)).join(', ') +\n"
    "  ' in ' + summary.storages + ' storages; ' + summary.tensors + ' tensors, ' +\n"
    "  summary.objects + ' Python objects'));\n"
    "const driver = summary.driver_memory;   // NVML's figure of a live process\n"
    "if (driver)\n"
    "  totals.append(el('div', {id: 'driver'}, 'outside the caching allocator: ' +\n"
    "    (driver.state === 'read' ? human(driver.outside_allocator) + ' on cuda (NVML: the process ' +\n"
    "     'uses ' + human(driver.used) + ', the allocator reserved ' + human(driver.reserved) + ')'\n"
    "     : 'not known: ' + driver.why)));\n"
    "// The pictures: per device, a bar of its categories and one of its holders, each piece as wide\n"
    "// as its bytes; with the allocator read, both end in the blocks no tensor accounts for and the\n"
    "// cache, so that each bar is the device's reserved memory.\n"
    "const CATEGORY_COLOURS = {'parameters': '#3b6fb6', 'gradients': '#7a4fb0',\n"
    "  'optimizer state': '#c2592f', 'saved for backward': '#2f9a6b', 'held from C or C++': '#a33',\n"
    "  'other tensors': '#b08d2a', 'allocator cache': '#ddd'};\n"
    "const TOP_HOLDERS = 8;\n"
    "const pictures = document.getElementById('pictures');\n"
    "function picture(kind, device, pieces) {\n"
    "  const total = pieces.reduce((sum, p) => sum + p.bytes, 0);\n"
    "  const bar = el('div', {class: 'picture', 'data-kind': kind, 'data-device': device,\n"
    "                         'data-bytes': total});\n"
    "  pictures.append(el('div', {class: 'label'}, device + ' by ' + kind + ', ' + human(total)), bar);\n"
    "  pieces.filter(p => p.bytes > 0).forEach(p => {\n"
    "    const piece = el('div', {class: 'piece ' + (p.cls || ''), 'data-bytes': p.bytes,\n"
    "                             title: p.name + ': ' + human(p.bytes) + ' (' + p.bytes + ' bytes)'},\n"
    "                     p.name);\n"
    "    piece.style.width = (100 * p.bytes / total).toFixed(4) + '%';\n"
    "    if (p.colour) piece.style.background = p.colour;\n"
    "    bar.append(piece);\n"
    "  });\n"
    "}\n"
    "[...new Set(summary.categories.map(c => c.device))].forEach(device => {\n"
    "  const cuda = summary.cuda.find(c => 'cuda:' + c.device === device);\n"
    "  // the categories hold the C++ owners' blocks and the cache; the holders end in them\n"
    "  const unknown = cuda ? [{name: 'nothing known', bytes: cuda.unattributed, cls: 'unattributed'}]\n"
    "                       : [];\n"
    "  const tail = cuda ? [{name: 'torch\\'s C++', bytes: cuda.owned_by_cxx, cls: 'owned'}, unknown[0],\n"
    "                       {name: 'cached, free', bytes: cuda.cached, cls: 'cached'}] : [];\n"
    "  picture('category', device, summary.categories.filter(c => c.device === device)\n"
    "    .map(c => ({name: c.category, bytes: c.bytes, colour: CATEGORY_COLOURS[c.category]}))\n"
    "    .concat(unknown));\n"
    "  const held = summary.holders.map(h => ({name: h.holder, bytes: h.retained_by_device[device] || 0,\n"
    "                                          colour: colour(holderOf(h.steps))}))\n"
    "    .filter(h => h.bytes).sort((a, b) => b.bytes - a.bytes).slice(0, TOP_HOLDERS);\n"
    "  const a = summary.accounting.find(a => a.device === device) || {};\n"
    "  const shown = held.reduce((sum, h) => sum + h.bytes, 0);\n"
    "  picture('holder', device, held.concat([\n"
    "    {name: 'other holders', bytes: (a.retained || 0) - shown, colour: '#999'},\n"
    "    {name: 'shared by several', bytes: a.shared || 0, colour: '#777'},\n"
    "    {name: 'held from C', bytes: a.held_from_c || 0, colour: '#a33'},\n"
    "    {name: 'held by C++ objects', bytes: a.cxx || 0, colour: '#933'},\n"
    "    {name: 'garbage', bytes: a.garbage || 0, colour: '#bbb'}]).concat(tail));\n"
    "});\n"
    "const ctbody = document.querySelector('#categories tbody');\n"
    "summary.categories.filter(c => c.storages || c.bytes).forEach(c => {\n"
    "  const row = el('tr', {class: 'category', 'data-bytes': c.bytes});\n"
    "  row.append(el('td', {}, c.device), el('td', {}, c.category),\n"
    "             el('td', {class: 'n', title: c.bytes + ' bytes'}, human(c.bytes)),\n"
    "             el('td', {class: 'n'}, c.storages));\n"
    "  ctbody.append(row);\n"
    "});\n"
    "const atbody = document.querySelector('#accounting tbody');\n"
    "summary.accounting.forEach(a => Object.keys(a).filter(k => k !== 'device' && a[k])\n"
    "  .forEach(k => {\n"
    "    const row = el('tr', {class: 'accounting', 'data-bytes': a[k]});\n"
    "    row.append(el('td', {}, a.device), el('td', {}, k.replace(/_/g, ' ')),\n"
    "               el('td', {class: 'n', title: a[k] + ' bytes'}, human(a[k])));\n"
    "    atbody.append(row);\n"
    "  }));\n"
    "summary.cuda.forEach(c => [['held by torch\\'s C++ (cuBLAS workspaces)', c.owned_by_cxx],\n"
    "                          ['in blocks nothing known holds', c.unattributed],\n"
    "                          ['cached by the allocator, free', c.cached]].forEach(([k, v]) => {\n"
    "  const row = el('tr', {class: 'accounting', 'data-bytes': v});\n"
    "  row.append(el('td', {}, 'cuda:' + c.device), el('td', {}, k),\n"
    "             el('td', {class: 'n', title: v + ' bytes'}, human(v)));\n"
    "  atbody.append(row);\n"
    "}));\n"
    "const tbody = document.querySelector('#holders tbody');\n"
    "// a holder's drill-down as rows under it, each indented by its level\n"
    "function drillRows(holder, d, level) {\n"
    "  if (d.path === null) return;\n"
    "  const where = d.path.startsWith(holder) ? d.path.slice(holder.length) : d.path;\n"
    "  if (where || !d.parts.length) {\n"
    "    const row = el('tr', {class: 'drill', 'data-bytes': d.retained_bytes});\n"
    "    const name = el('td', {}, '\\u00a0'.repeat(4 + 4 * level) + '\\u21b3 ' +\n"
    "      (where || '(the holder itself)') + ': ' + (d.accumulation_point ?\n"
    "      'accumulation point, ' : '') + d.objects + (d.objects === 1 ? ' object' : ' objects'));\n"
    "    row.append(name, el('td', {class: 'n', title: d.retained_bytes + ' bytes'},\n"
    "                        human(d.retained_bytes)), el('td'), el('td'));\n"
    "    tbody.append(row);\n"
    "  }\n"
    "  d.parts.forEach(p => drillRows(holder, p, where ? level + 1 : level));\n"
    "}\n"
    "summary.holders.forEach((h, i) => {\n"
    "  const row = el('tr', {id: 'holder-' + i, 'data-retained': h.retained_bytes,\n"
    "                        'data-reachable': h.reachable_bytes});\n"
    "  const name = el('td');\n"
    "  const sw = el('span', {class: 'swatch'});\n"
    "  sw.style.background = colour(holderOf(h.steps));\n"
    "  name.append(sw, document.createTextNode(h.holder));\n"
    "  row.append(name, el('td', {class: 'n', title: h.retained_bytes + ' bytes'},\n"
    "                      human(h.retained_bytes)),\n"
    "             el('td', {class: 'n', title: h.reachable_bytes + ' bytes'},\n"
    "                human(h.reachable_bytes)),\n"
    "             el('td', {class: 'n'}, h.storages));\n"
    "  tbody.append(row);\n"
    "  if (h.drill && (h.drill.parts.length || h.drill.objects > 1 || h.drill.accumulation_point))\n"
    "    drillRows(h.holder, h.drill, 0);\n"
    "});\n"
    "// The map: each device's segments side by side, wrapping, all at one scale: the widest as wide\n"
    "// as the map, unless that would take more than MAP_ROWS rows for all of them (10,000 small\n"
    "// segments), when they are drawn narrower; a block's width is its share of its segment. The\n"
    "// detail beside it follows the pointer, or keeps the block last clicked.\n"
    "const MAP_ROWS = 40, ROW_GAP = 2;\n"
    "const detail = document.getElementById('detail');\n"
    "const drawn = [];   // [segment, block] by a block element's data-index\n"
    "let kept = null;\n"
    "// A block's holders, and where it lies: lines for the detail.\n"
    "function describe(b) {\n"
    "  const lines = [b.state + ' block ' + b.address + ', ' + b.size + ' bytes (' + human(b.size) +\n"
    "                 ')'];\n"
    "  b.tensors.forEach(t => lines.push('  tensor ' + t.address + ' held by ' + t.held_by +\n"
    "    (t.paths.length ? ':\\n    ' + t.paths.join('\\n    ') : '')));\n"
    "  if (b.owner) lines.push('  held by ' + b.owner);\n"
    "  if (b.unattributed) lines.push('  no tensor culeak found accounts for it');\n"
    "  return lines;\n"
    "}\n"
    "// The detail of block i: its holders, then its segment's other allocated blocks' (a block of a\n"
    "// few bytes in a wide segment is narrower than a pixel: pointing at it may find its neighbour).\n"
    "const NEIGHBOURS = 16;\n"
    "function show(i) {\n"
    "  const [s, b] = drawn[i];\n"
    "  const lines = describe(b).concat(['  in segment ' + s.address + ', ' + human(s.size) + ', ' +\n"
    "    s.pool + ' pool' + (s.pool_owner ? ' of ' + s.pool_owner : '') + ', stream ' + s.stream +\n"
    "    (s.expandable ? ', expandable' : '')]);\n"
    "  const others = s.blocks.filter(o => o !== b && o.state === 'active_allocated');\n"
    "  if (others.length) lines.push('', 'the segment\\'s other allocated blocks:');\n"
    "  others.slice(0, NEIGHBOURS).forEach(o => lines.push(...describe(o)));\n"
    "  if (others.length > NEIGHBOURS) lines.push('  ... and ' + (others.length - NEIGHBOURS) + ' more');\n"
    "  if (kept === i) lines.push('', '(kept: click it again, or another block, to change)');\n"
    "  detail.textContent = lines.join('\\n');\n"
    "  detail.setAttribute('data-block', b.address);\n"
    "}\n"
    "const segments = document.getElementById('segments');\n"
    "segments.onmouseover = e => {\n"
    "  const b = e.target.closest('.block');\n"
    "  if (b && kept === null) show(+b.dataset.index);\n"
    "};\n"
    "segments.onclick = e => {\n"
    "  const b = e.target.closest('.block');\n"
    "  if (!b) return;\n"
    "  kept = kept === +b.dataset.index ? null : +b.dataset.index;\n"
    "  show(+b.dataset.index);\n"
    "};\n"
    "if (!blocks) segments.textContent = 'No CUDA caching allocator was read.';\n"
    "(blocks ? blocks.devices : []).forEach(d => {\n"
    "  segments.append(el('div', {class: 'label'}, 'cuda:' + d.device + ': ' +\n"
    "    human(d.reserved) + ' reserved, ' + human(d.allocated) + ' allocated in ' +\n"
    "    d.segments.length + ' segments'));\n"
    "  const map = el('div', {class: 'device', 'data-device': d.device});\n"
    "  segments.append(map);\n"
    "  const width = map.clientWidth;\n"
    "  const widest = Math.max(1, ...d.segments.map(s => s.size));\n"
    "  const total = d.segments.reduce((sum, s) => sum + s.size, 0);\n"
    "  const scale = Math.min(width / widest, width * MAP_ROWS / Math.max(1, 2 * total));\n"
    "  d.segments.forEach(s => {\n"
    "    const bar = el('div', {class: 'segment', 'data-address': s.address, 'data-size': s.size,\n"
    "                           title: s.address + '  ' + human(s.size) + '  ' + s.pool + ' pool' +\n"
    "                                  (s.pool_owner ? ' of ' + s.pool_owner : '') + ', stream ' +\n"
    "                                  s.stream + (s.expandable ? ', expandable' : '')});\n"
    "    const px = Math.max(1, Math.round(s.size * scale));\n"
    "    bar.style.width = px + 'px';\n"
    "    if (px < 6) bar.classList.add('thin');   // an outline would hide its blocks\n"
    "    s.blocks.forEach(b => {\n"
    "      const t = b.tensors.find(t => t.steps.length);\n"
    "      const cls = b.state !== 'active_allocated' ? b.state : t ? 'held'\n"
    "                  : b.owner ? 'owned' : b.unattributed ? 'unattributed' : 'held';\n"
    "      const div = el('div', {class: 'block ' + cls, 'data-address': b.address,\n"
    "                             'data-size': b.size, 'data-state': b.state,\n"
    "                             'data-index': drawn.length});\n"
    "      div.style.flex = b.size + ' 1 0';\n"
    "      if (t) div.style.background = colour(holderOf(t.steps[0]));\n"
    "      drawn.push([s, b]);\n"
    "      bar.append(div);\n"
    "    });\n"
    "    map.append(bar);\n"
    "  });\n"
    "});\n"
    "const warnings = document.getElementById('warnings');\n"
    "const said = summary.warnings.concat(blocks ? blocks.warnings : []);\n"
    "[...new Set(said)].forEach(w => warnings.append(el('li', {class: 'warn'}, w)));\n"
    "if (!said.length) warnings.append(el('li', {}, 'none'));\n"
    "document.body.setAttribute('data-rendered', 'yes');\n"
    "</script></body></html>\n";

/* A document written by a report into memory; NULL when out of memory. */
static char *json_of(int (*write)(FILE *out, void *arg), void *arg, int *rc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    *rc = write(f, arg);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* JSON inside a <script> element: "</script" would end it and "<!--" change how it is read,
 * so every '<' (which JSON has only inside strings) is written as its escape. */
static void put_script_json(FILE *out, const char *json)
{
    for (const char *p = json; *p; p++) {
        if (*p == '<')
            fputs("\\u003c", out);
        else
            fputc(*p, out);
    }
}

struct models {
    struct py_heap *h;
    const struct torch_tensors *tt;
    const struct cl_holders *hs;
    const struct cc_allocator *a;
    const struct cl_driver_memory *driver;
    const struct cl_block_filter *filter;
    const struct cl_report_notes *w;
    struct cl_error *err;
};

static int summary_json(FILE *out, void *arg)
{
    struct models *m = arg;
    struct cl_text_options text = {CL_TEXT_WIDTH, 0};
    return cl_report_summary(out, m->h, m->tt, m->hs, m->a, m->driver, &text, NULL, true, m->w,
                             m->err);
}

static int blocks_json(FILE *out, void *arg)
{
    struct models *m = arg;
    return cl_report_blocks(out, m->a, m->tt, m->hs, m->filter, true, m->w, m->err);
}

/* The page's data: {"header": where and when, "summary": its --json document, "blocks":
 * blocks' or null}. */
struct documents {
    const struct cl_html_header *header;
    const char *summary, *blocks;
};

static int page_data(FILE *out, void *arg)
{
    const struct documents *d = arg;
    struct cl_json j;
    cl_json_init(&j, out);
    cl_json_begin_object(&j);
    cl_json_key(&j, "header");
    cl_json_begin_object(&j);
    char when[32];
    time_t now = time(NULL);
    struct tm utc;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &utc));
    const char *keys[] = {"target", "python", "torch", "time"};
    const char *values[] = {d->header->target, d->header->python, d->header->torch, when};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        cl_json_key(&j, keys[k]);
        cl_json_string(&j, values[k]);
    }
    cl_json_end_object(&j);
    cl_json_key(&j, "summary");
    cl_json_raw(&j, d->summary);
    cl_json_key(&j, "blocks");
    if (d->blocks)
        cl_json_raw(&j, d->blocks);
    else
        cl_json_null(&j);
    cl_json_end_object(&j);   /* the outermost value: written out */
    return 0;
}

int cl_report_html(FILE *out, const struct cl_html_header *header, struct py_heap *h,
                   const struct torch_tensors *tt, const struct cl_holders *hs,
                   const struct cc_allocator *a, const struct cl_driver_memory *driver,
                   const struct cl_block_filter *filter, const struct cl_report_notes *w,
                   struct cl_error *err)
{
    struct models m = {h, tt, hs, a, driver, filter, w, err};
    int rc = 0;
    char *summary = json_of(summary_json, &m, &rc);
    char *blocks = a && !rc ? json_of(blocks_json, &m, &rc) : NULL;
    if (!rc && (!summary || (a && !blocks)))
        rc = cl_error_set(err, CL_E_INTERNAL, "out of memory writing the HTML report");
    struct documents docs = {header, summary, blocks};
    char *data = rc ? NULL : json_of(page_data, &docs, &rc);
    if (!rc && !data)
        rc = cl_error_set(err, CL_E_INTERNAL, "out of memory writing the HTML report");
    if (!rc) {
        fputs(page_head, out);
        put_script_json(out, data);
        fputs(page_tail, out);
    }
    free(summary);
    free(blocks);
    free(data);
    return rc;
}
