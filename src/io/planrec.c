/* planrec.c: the records of a plan in text, csv and JSON (planrec.h). */
#include <inttypes.h>
#include <stdio.h>

#include "budget.h"
#include "fields.h"
#include "numbers.h"
#include "planjson.h"
#include "twolevel.h"
#include "io/planrec.h"

int bptt_plan_record_json(const bptt_plan_record *r, char *buf, size_t cap)
{
    const int64_t u = r->unit > 1 ? r->unit : 1;
    char al[32], mem[32], full[32], least[32], peak[32];
    bptt_slots_text(al, sizeof al, r->alpha, u);
    bptt_slots_text(mem, sizeof mem, r->memory, u);
    bptt_slots_text(full, sizeof full, r->full_peak, u);
    bptt_slots_text(least, sizeof least, r->min_memory, u);
    const int head = snprintf(buf, cap,
                              "\"strategy\":\"%s\",\"length\":%" PRId64
                              ",\"alpha\":%s,\"memory\":%s",
                              r->strategy, r->length, al, mem);
    if (head < 0 || (size_t)head >= cap)
        return head;
    char *rest = buf + head;
    const size_t left = cap - (size_t)head;
    int n;
    if (r->st) {
        const bptt_plan_stats *st = r->st;
        n = snprintf(rest, left,
                     ",\"forward_ops\":%" PRId64 ",\"recompute_ops\":%" PRId64
                     ",\"backward_ops\":%" PRId64 ",\"peak_slots\":%s"
                     ",\"forward_ops_per_step\":%.6f"
                     ",\"full_peak_slots\":%s"
                     ",\"memory_fraction\":%.6f,\"min_memory\":%s"
                     ",\"actions\":%zu",
                     st->forward_ops, st->recompute_ops, st->backward_ops,
                     bptt_slots_text(peak, sizeof peak, st->peak_units, u),
                     (double)st->forward_ops / (double)r->length, full,
                     (double)st->peak_units / (double)r->full_peak, least,
                     st->n_actions);
    } else {
        n = snprintf(rest, left,
                     ",\"forward_ops\":null,\"recompute_ops\":null"
                     ",\"backward_ops\":null,\"peak_slots\":null"
                     ",\"forward_ops_per_step\":null"
                     ",\"full_peak_slots\":%s"
                     ",\"memory_fraction\":null,\"min_memory\":%s"
                     ",\"actions\":null",
                     full, least);
    }
    return n < 0 ? n : head + n;
}

void bptt_plan_header(bptt_strbuf *b, int format, int sized)
{
    if (format == BPTT_FIELDS_CSV)
        bptt_strbuf_printf(b, "strategy,length,alpha,memory,forward_ops,"
                           "recompute_ops,backward_ops,peak_slots,"
                           "forward_ops_per_step,full_peak_slots,"
                           "memory_fraction,min_memory,actions,plan_seconds,"
                           "table_bytes%s\n",
                           sized ? ",cell,layers,hidden,batch,"
                                   "hidden_state_bytes,internal_state_bytes,"
                                   "memory_bytes,peak_bytes"
                                 : "");
    else if (format == BPTT_FIELDS_TEXT)
        bptt_strbuf_printf(b, "%-10s %8s %6s %10s %12s %9s %10s %9s\n",
                           "strategy", "length", "alpha", "memory",
                           "forward_ops", "fwd/step", "peak", "vs full");
}

/* The network and the bytes, after the other values (csv: columns; JSON:
 * members). */
static void sizes(bptt_strbuf *b, int format, const bptt_plan_record *r,
                  const bptt_plan_sizes *z)
{
    const int64_t q = z->quantum, h = r->unit, s = r->alpha;
    if (format == BPTT_FIELDS_CSV)
        bptt_strbuf_printf(b, ",%s,%" PRId64 ",%" PRId64 ",%" PRId64
                           ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64,
                           z->cell, z->layers, z->hidden, z->batch, h * q,
                           s * q, r->memory * q, r->st->peak_units * q);
    else
        bptt_strbuf_printf(b, ",\"cell\":\"%s\",\"layers\":%" PRId64
                           ",\"hidden\":%" PRId64 ",\"batch\":%" PRId64
                           ",\"hidden_state_bytes\":%" PRId64
                           ",\"internal_state_bytes\":%" PRId64
                           ",\"memory_bytes\":%" PRId64
                           ",\"peak_bytes\":%" PRId64,
                           z->cell, z->layers, z->hidden, z->batch, h * q,
                           s * q, r->memory * q, r->st->peak_units * q);
}

/* A plan's actions as the record's "schedule" array (nothing for NULL). */
static void schedule_json(bptt_strbuf *b, const bptt_plan *schedule)
{
    if (!schedule)
        return;
    bptt_strbuf_puts(b, ",\"schedule\":[");
    for (size_t i = 0; i < schedule->n_actions; i++)
        bptt_strbuf_printf(b, "%s{\"op\":\"%s\",\"step\":%u}",
                           i ? "," : "",
                           bptt_op_name((int)schedule->actions[i].op),
                           schedule->actions[i].step);
    bptt_strbuf_puts(b, "]");
}


void bptt_plan_row(bptt_strbuf *b, int format, const bptt_plan_record *r,
                   const bptt_plan_sizes *z, double seconds,
                   size_t table_bytes, const bptt_plan *schedule)
{
    const bptt_plan_stats *st = r->st;
    const double per_step = (double)st->forward_ops / (double)r->length;
    const double frac = (double)st->peak_units / (double)r->full_peak;
    const int64_t h = r->unit;
    char al[32], mem[32], peak[32], fp[32], mm[32];
    bptt_slots_text(al, sizeof al, r->alpha, h);
    bptt_slots_text(mem, sizeof mem, r->memory, h);
    bptt_slots_text(peak, sizeof peak, st->peak_units, h);
    switch (format) {
    case BPTT_FIELDS_TEXT:
        bptt_strbuf_printf(b, "%-10s %8" PRId64 " %6s %10s %12" PRId64
                           " %9.4f %10s %8.2f%%\n",
                           r->strategy, r->length, al, mem, st->forward_ops,
                           per_step, peak, 100.0 * frac);
        break;
    case BPTT_FIELDS_CSV:
        bptt_strbuf_printf(b, "%s,%" PRId64 ",%s,%s,%" PRId64 ",%" PRId64
                           ",%" PRId64 ",%s,%.6f,%s,%.6f,%s,%zu,%.6f,%zu",
                           r->strategy, r->length, al, mem, st->forward_ops,
                           st->recompute_ops, st->backward_ops, peak,
                           per_step,
                           bptt_slots_text(fp, sizeof fp, r->full_peak, h),
                           frac,
                           bptt_slots_text(mm, sizeof mm, r->min_memory, h),
                           st->n_actions, seconds, table_bytes);
        if (z && z->cell)
            sizes(b, format, r, z);
        bptt_strbuf_puts(b, "\n");
        break;
    case BPTT_FIELDS_JSON: {
        char buf[1024];
        bptt_plan_record_json(r, buf, sizeof buf);
        bptt_strbuf_printf(b, "{%s,\"plan_seconds\":%.6f,\"table_bytes\":%zu",
                           buf, seconds, table_bytes);
        if (z && z->cell)
            sizes(b, format, r, z);
        schedule_json(b, schedule);
        bptt_strbuf_puts(b, "}\n");
        break;
    }
    }
}

void bptt_plan_row_infeasible(bptt_strbuf *b, int format,
                              const bptt_plan_record *r,
                              const bptt_plan_sizes *z)
{
    const int64_t h = r->unit;
    char al[32], mem[32], fp[32], mm[32], need[48];
    bptt_slots_text(al, sizeof al, r->alpha, h);
    bptt_slots_text(mem, sizeof mem, r->memory, h);
    bptt_slots_text(fp, sizeof fp, r->full_peak, h);
    bptt_slots_text(mm, sizeof mm, r->min_memory, h);
    const int sized = z && z->cell;
    const int64_t q = sized ? z->quantum : 0;
    switch (format) {
    case BPTT_FIELDS_TEXT:
        snprintf(need, sizeof need, "needs %s", mm);
        bptt_strbuf_printf(b, "%-10s %8" PRId64 " %6s %10s %12s %9s %10s "
                           "%9s\n", r->strategy, r->length, al, mem,
                           "infeasible", "-", need, "-");
        break;
    case BPTT_FIELDS_CSV:
        bptt_strbuf_printf(b, "%s,%" PRId64 ",%s,%s,,,,,,%s,,%s,,,",
                           r->strategy, r->length, al, mem, fp, mm);
        if (sized)
            bptt_strbuf_printf(b, ",%s,%" PRId64 ",%" PRId64 ",%" PRId64
                               ",%" PRId64 ",%" PRId64 ",%" PRId64 ",",
                               z->cell, z->layers, z->hidden, z->batch,
                               h * q, r->alpha * q, r->memory * q);
        bptt_strbuf_puts(b, "\n");
        break;
    case BPTT_FIELDS_JSON: {
        char buf[1024];
        bptt_plan_record_json(r, buf, sizeof buf);
        bptt_strbuf_printf(b, "{%s,\"plan_seconds\":null,"
                           "\"table_bytes\":null", buf);
        if (sized)
            bptt_strbuf_printf(b, ",\"cell\":\"%s\",\"layers\":%" PRId64
                               ",\"hidden\":%" PRId64 ",\"batch\":%" PRId64
                               ",\"hidden_state_bytes\":%" PRId64
                               ",\"internal_state_bytes\":%" PRId64
                               ",\"memory_bytes\":%" PRId64
                               ",\"peak_bytes\":null",
                               z->cell, z->layers, z->hidden, z->batch,
                               h * q, r->alpha * q, r->memory * q);
        bptt_strbuf_puts(b, "}\n");
        break;
    }
    }
}

void bptt_plan_actions(bptt_strbuf *b, int format, const bptt_plan *p,
                       int64_t unit)
{
    int64_t stored = p->hidden_units, slow = 0, fwd = 0;
    const int two = p->slow_budget != 0; /* a column for the slow level */
    if (format == BPTT_FIELDS_CSV)
        bptt_strbuf_printf(b, "index,op,step,stored_slots,forward_ops%s\n",
                           two ? ",slow_slots" : "");
    else
        bptt_strbuf_printf(b, "\n%8s  %-16s %8s %8s %8s%s\n", "index",
                           "action", "step", "stored", "fwd_ops",
                           two ? "     slow" : "");
    for (size_t i = 0; i < p->n_actions; i++) {
        const bptt_action *x = &p->actions[i];
        switch (x->op) {
        case BPTT_SAVE_HIDDEN: stored += p->hidden_units; break;
        case BPTT_SAVE_INTERNAL: stored += p->internal_units; break;
        case BPTT_FREE_HIDDEN: stored -= p->hidden_units; break;
        case BPTT_FREE_INTERNAL: stored -= p->internal_units; break;
        case BPTT_WRITE_HIDDEN: slow += p->hidden_units; break;
        case BPTT_WRITE_INTERNAL: slow += p->internal_units; break;
        case BPTT_DROP_HIDDEN: slow -= p->hidden_units; break;
        case BPTT_DROP_INTERNAL: slow -= p->internal_units; break;
        case BPTT_ADVANCE: fwd++; break;
        default: break;
        }
        const char *op = bptt_op_name((int)x->op);
        char st[32], sl[40] = "";
        bptt_slots_text(st, sizeof st, stored, unit);
        if (two) {
            char v[32];
            bptt_slots_text(v, sizeof v, slow, unit);
            snprintf(sl, sizeof sl, format == BPTT_FIELDS_CSV ? ",%s"
                                                              : " %8s", v);
        }
        if (format == BPTT_FIELDS_CSV)
            bptt_strbuf_printf(b, "%zu,%s,%u,%s,%" PRId64 "%s\n", i, op,
                               x->step, st, fwd, sl);
        else
            bptt_strbuf_printf(b, "%8zu  %-16s %8u %8s %8" PRId64 "%s\n",
                               i, op, x->step, st, fwd, sl);
    }
}

/* The slow level's budget as a record writes it: slots, or inf (in JSON
 * "inf", a string: no number says it). */
static const char *disk_text(char *buf, size_t cap, int64_t disk,
                             int64_t unit, int json)
{
    if (disk == BPTT_SLOW_UNLIMITED)
        snprintf(buf, cap, json ? "\"inf\"" : "inf");
    else
        bptt_slots_text(buf, cap, disk, unit);
    return buf;
}

void bptt_plan_slow_header(bptt_strbuf *b, int format, int sized)
{
    if (format == BPTT_FIELDS_CSV)
        bptt_strbuf_printf(b, "strategy,length,alpha,memory,disk,write_cost,"
                           "read_cost,forward_ops,recompute_ops,backward_ops,"
                           "slow_writes,slow_reads,cost,peak_slots,"
                           "slow_peak_slots,full_peak_slots,min_memory,"
                           "actions,plan_seconds,table_bytes%s\n",
                           sized ? ",cell,layers,hidden,batch,"
                                   "hidden_state_bytes,internal_state_bytes,"
                                   "memory_bytes,peak_bytes,disk_bytes,"
                                   "slow_peak_bytes"
                                 : "");
    else if (format == BPTT_FIELDS_TEXT)
        bptt_strbuf_printf(b, "%-8s %8s %6s %8s %8s %10s %10s %12s %11s "
                           "%10s %14s %8s %9s\n", "strategy", "length",
                           "alpha", "memory", "disk", "write_cost",
                           "read_cost", "forward_ops", "slow_writes",
                           "slow_reads", "cost", "peak", "slow_peak");
}

void bptt_plan_slow_row(bptt_strbuf *b, int format, const bptt_plan_record *r,
                        const bptt_plan_sizes *z, double seconds,
                        size_t table_bytes, const bptt_plan_slow *sl,
                        const bptt_plan *schedule)
{
    const bptt_plan_stats *st = r->st;
    const int64_t h = r->unit > 1 ? r->unit : 1;
    const int json = format == BPTT_FIELDS_JSON;
    const bptt_slow_level level = {sl->disk, sl->write_cost, sl->read_cost};
    char al[32], mem[32], disk[32], wc[32], rc[32], cost[32], peak[32],
        speak[32];
    bptt_slots_text(al, sizeof al, r->alpha, h);
    bptt_slots_text(mem, sizeof mem, r->memory, h);
    disk_text(disk, sizeof disk, sl->disk, h, json);
    bptt_real_text(wc, sizeof wc, sl->write_cost);
    bptt_real_text(rc, sizeof rc, sl->read_cost);
    bptt_real_text(cost, sizeof cost, bptt_twolevel_stats_cost(st, h, &level));
    bptt_slots_text(peak, sizeof peak, st->peak_units, h);
    bptt_slots_text(speak, sizeof speak, st->slow_peak_units, h);
    const int sized = z && z->cell;
    const int64_t q = sized ? z->quantum : 0;
    char dbytes[32] = "null";
    if (sized && sl->disk != BPTT_SLOW_UNLIMITED)
        snprintf(dbytes, sizeof dbytes, "%" PRId64, sl->disk * q);
    switch (format) {
    case BPTT_FIELDS_TEXT:
        bptt_strbuf_printf(b, "%-8s %8" PRId64 " %6s %8s %8s %10s %10s "
                           "%12" PRId64 " %11" PRId64 " %10" PRId64
                           " %14s %8s %9s\n", r->strategy, r->length, al,
                           mem, disk, wc, rc, st->forward_ops,
                           st->slow_writes, st->slow_reads, cost, peak,
                           speak);
        break;
    case BPTT_FIELDS_CSV: {
        char fp[32], mm[32];
        bptt_strbuf_printf(b, "%s,%" PRId64 ",%s,%s,%s,%s,%s,%" PRId64
                           ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                           ",%s,%s,%s,%s,%s,%zu,%.6f,%zu",
                           r->strategy, r->length, al, mem, disk, wc, rc,
                           st->forward_ops, st->recompute_ops,
                           st->backward_ops, st->slow_writes, st->slow_reads,
                           cost, peak, speak,
                           bptt_slots_text(fp, sizeof fp, r->full_peak, h),
                           bptt_slots_text(mm, sizeof mm, r->min_memory, h),
                           st->n_actions, seconds, table_bytes);
        if (sized) {
            sizes(b, format, r, z);
            bptt_strbuf_printf(b, ",%s,%" PRId64,
                               sl->disk == BPTT_SLOW_UNLIMITED ? "" : dbytes,
                               st->slow_peak_units * q);
        }
        bptt_strbuf_puts(b, "\n");
        break;
    }
    case BPTT_FIELDS_JSON: {
        char buf[1024];
        bptt_plan_record_json(r, buf, sizeof buf);
        bptt_strbuf_printf(b, "{%s,\"disk\":%s,\"write_cost\":%s"
                           ",\"read_cost\":%s,\"slow_writes\":%" PRId64
                           ",\"slow_reads\":%" PRId64
                           ",\"slow_peak_slots\":%s,\"cost\":%s"
                           ",\"plan_seconds\":%.6f,\"table_bytes\":%zu",
                           buf, disk, wc, rc, st->slow_writes, st->slow_reads,
                           speak, cost, seconds, table_bytes);
        if (sized) {
            sizes(b, format, r, z);
            bptt_strbuf_printf(b, ",\"disk_bytes\":%s"
                               ",\"slow_peak_bytes\":%" PRId64,
                               dbytes, st->slow_peak_units * q);
        }
        schedule_json(b, schedule);
        bptt_strbuf_puts(b, "}\n");
        break;
    }
    }
}

void bptt_plan_curve(bptt_strbuf *b, int format, const bptt_plan_record *r,
                     const bptt_table *tb, int64_t top)
{
    const char *name = r->strategy;
    const int64_t h = r->unit, len = r->length;
    char al[32], mem[32], cost[32] = "", ps[32] = "";
    bptt_slots_text(al, sizeof al, r->alpha, h);
    if (format == BPTT_FIELDS_CSV)
        bptt_strbuf_puts(b, "strategy,length,alpha,memory,forward_ops,"
                         "forward_ops_per_step,memory_fraction\n");
    else if (format == BPTT_FIELDS_TEXT)
        bptt_strbuf_printf(b, "%10s %12s %9s\n", "memory", "forward_ops",
                           "fwd/step");
    for (int64_t m = 1; m <= top; m++) {
        const int64_t c = bptt_table_cost(tb, m);
        const double frac = (double)m / (double)r->full_peak;
        bptt_slots_text(mem, sizeof mem, m, h);
        cost[0] = ps[0] = '\0';
        if (c >= 0) {
            snprintf(cost, sizeof cost, "%" PRId64, c);
            snprintf(ps, sizeof ps, "%.6f", (double)c / (double)len);
        }
        if (format == BPTT_FIELDS_CSV)
            bptt_strbuf_printf(b, "%s,%" PRId64 ",%s,%s,%s,%s,%.6f\n", name,
                               len, al, mem, cost, ps, frac);
        else if (format == BPTT_FIELDS_JSON)
            bptt_strbuf_printf(b, "{\"strategy\":\"%s\",\"length\":%" PRId64
                               ",\"alpha\":%s,\"memory\":%s,"
                               "\"forward_ops\":%s,"
                               "\"forward_ops_per_step\":%s,"
                               "\"memory_fraction\":%.6f}\n",
                               name, len, al, mem, c < 0 ? "null" : cost,
                               c < 0 ? "null" : ps, frac);
        else if (c < 0)
            bptt_strbuf_printf(b, "%10s %12s %9s\n", mem, "infeasible", "-");
        else
            bptt_strbuf_printf(b, "%10s %12" PRId64 " %9.4f\n", mem, c,
                               (double)c / (double)len);
    }
}

void bptt_plan_online_header(bptt_strbuf *b, int format)
{
    if (format == BPTT_FIELDS_TEXT)
        bptt_strbuf_printf(b, "%-10s %8s %6s %10s %12s %9s %10s %9s %12s "
                           "%8s %9s\n", "strategy", "length", "alpha",
                           "memory", "forward_ops", "fwd/step", "peak",
                           "vs full", "offline_ops", "ratio", "lookahead");
}

/* online / offline as text ("-" or null when either is not known). */
static const char *ratio_text(char *buf, size_t cap, int64_t online,
                              int64_t offline, const char *none)
{
    if (online < 0 || offline <= 0)
        snprintf(buf, cap, "%s", none);
    else
        snprintf(buf, cap, "%.6f", (double)online / (double)offline);
    return buf;
}

void bptt_plan_online_row(bptt_strbuf *b, int format,
                          const bptt_plan_record *r, const bptt_plan_sizes *z,
                          double seconds, size_t table_bytes,
                          const bptt_plan_online *on,
                          const bptt_plan *schedule)
{
    const bptt_plan_stats *st = r->st;
    const int64_t off = on->offline_forward_ops;
    char ratio[32], offs[32];
    if (format == BPTT_FIELDS_TEXT) {
        const int64_t h = r->unit;
        char al[32], mem[32], peak[32];
        bptt_slots_text(al, sizeof al, r->alpha, h);
        bptt_slots_text(mem, sizeof mem, r->memory, h);
        bptt_slots_text(peak, sizeof peak, st->peak_units, h);
        if (off >= 0)
            snprintf(offs, sizeof offs, "%" PRId64, off);
        else
            snprintf(offs, sizeof offs, "-");
        if (off > 0)
            snprintf(ratio, sizeof ratio, "%.4f",
                     (double)st->forward_ops / (double)off);
        else
            snprintf(ratio, sizeof ratio, "-");
        bptt_strbuf_printf(b, "%-10s %8" PRId64 " %6s %10s %12" PRId64
                           " %9.4f %10s %8.2f%% %12s %8s %9s\n",
                           r->strategy, r->length, al, mem, st->forward_ops,
                           (double)st->forward_ops / (double)r->length, peak,
                           100.0 * (double)st->peak_units /
                               (double)r->full_peak,
                           offs, ratio, on->lookahead ? "yes" : "no");
        return;
    }
    if (format != BPTT_FIELDS_JSON)
        return;
    char buf[1024];
    bptt_plan_record_json(r, buf, sizeof buf);
    if (off >= 0)
        snprintf(offs, sizeof offs, "%" PRId64, off);
    else
        snprintf(offs, sizeof offs, "null");
    bptt_strbuf_printf(b, "{%s,\"plan_seconds\":%.6f,\"table_bytes\":%zu"
                       ",\"online\":true,\"lookahead\":%s"
                       ",\"prefix_actions\":%zu,\"offline_forward_ops\":%s"
                       ",\"online_offline_ratio\":%s",
                       buf, seconds, table_bytes,
                       on->lookahead ? "true" : "false", on->prefix_actions,
                       offs,
                       ratio_text(ratio, sizeof ratio, st->forward_ops, off,
                                  "null"));
    if (z && z->cell)
        sizes(b, format, r, z);
    schedule_json(b, schedule);
    bptt_strbuf_puts(b, "}\n");
}

void bptt_plan_online_curve(bptt_strbuf *b, int format,
                            const bptt_plan_record *r, int lookahead,
                            const size_t *lengths, size_t n,
                            const int64_t *online, const int64_t *offline)
{
    const int64_t h = r->unit;
    char al[32], mem[32], on[32], off[32], ratio[32];
    bptt_slots_text(al, sizeof al, r->alpha, h);
    bptt_slots_text(mem, sizeof mem, r->memory, h);
    const int json = format == BPTT_FIELDS_JSON;
    if (!json)
        bptt_strbuf_printf(b, "%10s %12s %12s %9s\n", "T", "online",
                           "offline", "ratio");
    for (size_t k = 0; k < n; k++) {
        const size_t t = lengths[k];
        const int64_t x = online[t - 1], y = offline[t - 1];
        const char *none = json ? "null" : "-";
        if (x >= 0)
            snprintf(on, sizeof on, "%" PRId64, x);
        else
            snprintf(on, sizeof on, "%s", none);
        if (y >= 0)
            snprintf(off, sizeof off, "%" PRId64, y);
        else
            snprintf(off, sizeof off, "%s", none);
        if (json)
            ratio_text(ratio, sizeof ratio, x, y, none);
        else if (x >= 0 && y > 0)
            snprintf(ratio, sizeof ratio, "%.4f", (double)x / (double)y);
        else
            snprintf(ratio, sizeof ratio, "-");
        if (json)
            bptt_strbuf_printf(b, "{\"strategy\":\"%s\",\"online\":true,"
                               "\"lookahead\":%s,\"length\":%zu,"
                               "\"alpha\":%s,\"memory\":%s,"
                               "\"forward_ops\":%s,"
                               "\"offline_forward_ops\":%s,"
                               "\"online_offline_ratio\":%s}\n",
                               r->strategy, lookahead ? "true" : "false", t,
                               al, mem, on, off, ratio);
        else
            bptt_strbuf_printf(b, "%10zu %12s %12s %9s\n", t, on, off,
                               ratio);
    }
}

void bptt_plan_verdict(bptt_strbuf *b, int json, const bptt_plan *plan,
                       const bptt_plan_stats *st, int ok)
{
    const int64_t h = plan->hidden_units;
    char peak[32], mem[32];
    bptt_slots_text(peak, sizeof peak, st->peak_units, h);
    bptt_slots_text(mem, sizeof mem, plan->budget, h);
    const char *rule = bptt_violation_str(st->violation);
    const bptt_action *bad =
        !ok && st->bad_action < plan->n_actions
            ? &plan->actions[st->bad_action]
            : NULL;
    const int two = plan->slow_budget != 0;
    char disk[32], speak[32];
    disk_text(disk, sizeof disk, plan->slow_budget, h, json);
    bptt_slots_text(speak, sizeof speak, st->slow_peak_units, h);
    if (json) {
        bptt_strbuf_printf(b, "{\"valid\":%s,\"length\":%zu,\"actions\":%zu",
                           ok ? "true" : "false", plan->length,
                           plan->n_actions);
        if (ok && two)
            bptt_strbuf_printf(b, ",\"forward_ops\":%" PRId64
                               ",\"recompute_ops\":%" PRId64
                               ",\"backward_ops\":%" PRId64
                               ",\"peak_slots\":%s,\"disk\":%s"
                               ",\"slow_writes\":%" PRId64
                               ",\"slow_reads\":%" PRId64
                               ",\"slow_peak_slots\":%s}\n",
                               st->forward_ops, st->recompute_ops,
                               st->backward_ops, peak, disk, st->slow_writes,
                               st->slow_reads, speak);
        else if (ok)
            bptt_strbuf_printf(b, ",\"forward_ops\":%" PRId64
                               ",\"recompute_ops\":%" PRId64
                               ",\"backward_ops\":%" PRId64
                               ",\"peak_slots\":%s}\n",
                               st->forward_ops, st->recompute_ops,
                               st->backward_ops, peak);
        else if (bad)
            bptt_strbuf_printf(b, ",\"bad_action\":%zu,\"op\":\"%s\","
                               "\"step\":%u,\"rule\":\"%s\"}\n",
                               st->bad_action, bptt_op_name((int)bad->op),
                               bad->step, rule);
        else
            bptt_strbuf_printf(b, ",\"bad_action\":%zu,\"op\":null,"
                               "\"step\":null,\"rule\":\"%s\"}\n",
                               st->bad_action, rule);
    } else if (ok) {
        const int limited = plan->budget / h < BPTT_PLAN_NO_LIMIT;
        bptt_strbuf_printf(b, "valid plan: length %zu, %zu actions, %" PRId64
                           " forward ops (%" PRId64 " recomputations), "
                           "%" PRId64 " backward ops, peak %s slots%s%s%s",
                           plan->length, plan->n_actions, st->forward_ops,
                           st->recompute_ops, st->backward_ops, peak,
                           limited ? " (budget " : "", limited ? mem : "",
                           limited ? ")" : "");
        if (two)
            bptt_strbuf_printf(b, "; slow level (disk %s%s): %" PRId64
                               " states written, %" PRId64 " read, peak %s "
                               "slots", disk,
                               plan->slow_budget == BPTT_SLOW_UNLIMITED
                                   ? ""
                                   : " slots",
                               st->slow_writes, st->slow_reads, speak);
        bptt_strbuf_puts(b, "\n");
    } else if (bad) {
        bptt_strbuf_printf(b, "invalid plan: action %zu (%s %u) breaks a "
                           "rule: %s\n", st->bad_action,
                           bptt_op_name((int)bad->op), bad->step, rule);
    } else {
        bptt_strbuf_printf(b, "invalid plan: at its end (after %zu "
                           "actions): %s\n", plan->n_actions, rule);
    }
}
