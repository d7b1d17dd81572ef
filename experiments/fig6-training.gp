# fig6-training.gp: loss against iteration, full BPTT (line) and MSM at 5%
# (points), with each task's chance level (data from
# experiments/fig6-training).  Variables: datafile, outfile, term, seed,
# iters, diff (the largest loss difference between the strategies); per
# task (a_
# adding, x_ text): _t, _h, _b, _lr, _fwd (MSM 5%'s forward ops per step),
# _chance (nats); x_name (the text file's name).
if (term eq 'png') set terminal pngcairo size 1400,560 font 'sans,11'
if (term eq 'svg') set terminal svg size 1400,560 font 'sans,11'
set output outfile
set datafile separator ','
set multiplot layout 1,2 title sprintf("LSTM trained with Adam, seed %s: full BPTT and MSM at 5%% of its checkpoint memory.  Largest loss difference between them over every iteration: %s", seed, diff)
set grid
set key top right box opaque
set xlabel 'iteration (Adam updates, one batch each)'
set xrange [0:*]
set ylabel 'loss: cross-entropy per step (nats)'
# MSM's points: iterations 1, 1 + k, 1 + 2k, ..., about 50 of them
k = iters >= 100 ? iters / 50 : 1
msm_title = k > 1 ? sprintf('MSM, 5%% memory (1 iteration in %d)', k) : 'MSM, 5% memory'
# each panel from 0 to 1.3 times its highest loss: room above the curves
# for the key
stats datafile using 2 nooutput
set yrange [0:1.3 * STATS_max]
set title sprintf("Adding task: t = %d, hidden %d, batch %d, lr %s\nMSM at 5%%: %s forward ops per step", a_t, a_h, a_b, a_lr, a_fwd)
plot a_chance with lines dt 2 lw 2 lc rgb '#555555' title sprintf('chance level (input unseen): %.3f nats', a_chance), \
     datafile using 1:2 with lines lw 2 lc rgb '#2ca02c' title 'full BPTT', \
     '' using 1:((int($1) - 1) % k == 0 ? $3 : NaN) with points pt 6 ps 1.1 lw 1.5 lc rgb '#1f4fb4' title msm_title
set autoscale y  # stats keeps only the points inside the y range
stats datafile using 4 nooutput
set yrange [0:1.3 * STATS_max]
set title sprintf("Character-level text (%s): t = %d, hidden %d, batch %d, lr %s\nMSM at 5%%: %s forward ops per step", x_name, x_t, x_h, x_b, x_lr, x_fwd)
plot x_chance with lines dt 2 lw 2 lc rgb '#555555' title sprintf('chance level (input unseen): %.3f nats', x_chance), \
     datafile using 1:4 with lines lw 2 lc rgb '#2ca02c' title 'full BPTT', \
     '' using 1:((int($1) - 1) % k == 0 ? $5 : NaN) with points pt 6 ps 1.1 lw 1.5 lc rgb '#1f4fb4' title msm_title
unset multiplot
