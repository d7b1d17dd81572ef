# fig3-headline.gp: time per iteration against memory, both relative to full
# BPTT, measured on an LSTM (data from experiments/fig3-headline), and against
# the plan's forward ops.  Each measured ratio is the median of the ratios of
# neighbouring iterations (the plan's and full BPTT's, in one process), its
# bar the distribution-free 95% interval of that median (full BPTT's bar:
# full BPTT against itself, the noise); MSM's points carry their budgets.
# The dashed line is the time the plan's forward ops predict at full BPTT's
# measured forward step time (predicted_ratio).
# Variables: datafile, outfile, term (png or svg), T, H, B.
if (term eq 'png') set terminal pngcairo size 1650,600 font 'sans,11'
if (term eq 'svg') set terminal svg size 1650,600 font 'sans,11' dynamic
set output outfile
set datafile separator ','
# columns: 2 budget, 3 forward_ops_per_step, 7 checkpoint_fraction,
# 8 total_fraction, 11 time_ratio (median), 12/13 its interval,
# 14 the interval's coverage, 15 rounds, 17 predicted_ratio
stats datafile using 14 nooutput
cover = STATS_min
stats datafile using 15 nooutput
rounds = STATS_min
stats datafile using 7 nooutput
ckpt_lo = STATS_min
stats datafile using 8 nooutput
total_lo = STATS_min
stats datafile using 13 nooutput
top = STATS_max
stats datafile using 12 nooutput
bottom = STATS_min < 0.9 ? STATS_min * 0.95 : 0.9
stats datafile using 3 nooutput
ops_hi = STATS_max
msm(c) = strcol(1) eq 'msm' ? column(c) : 1/0
chen(c) = strcol(1) eq 'chen' ? column(c) : 1/0
full(c) = strcol(1) eq 'full' ? column(c) : 1/0
# MSM at 100% sits on full BPTT: its label would cover full's marker
lab(c) = strcol(1) eq 'msm' && strcol(2) ne '100%' ? column(c) : 1/0
# against forward ops the budgets from 3% to 20% crowd together: 3% and 10% unlabelled
lab3(c) = strcol(2) eq '3%' || strcol(2) eq '10%' ? 1/0 : lab(c)
blue = '#1f77b4'; red = '#d62728'; green = '#2ca02c'; grey = '#555555'; orange = '#ff7f0e'
set multiplot layout 1,3 title sprintf("Measured: one training iteration of an LSTM, t = %d, hidden %d, batch %d, input 64\npoints: median ratio of neighbouring iterations, plan's to full BPTT's, over %d rounds in one process; bars: its %.1f%% interval\ndashed: the time the plan's forward ops predict (each forward op above t costs one of full BPTT's measured forward steps)", T, H, B, rounds, 100 * cover) font 'sans,12'
set grid
set key top right spacing 1.15
set yrange [bottom:(top > 1.6 ? top * 1.05 : 1.7)]
set ylabel 'time per iteration / full BPTT'
set logscale x
set xrange [ckpt_lo / 1.6:1.6]
set xlabel 'checkpoint memory / full BPTT (log)'
set title 'Checkpoint memory (the paper''s measure)'
plot datafile using (msm(7)):17 with linespoints dt 2 lw 2 pt 6 ps 1 lc rgb grey title 'predicted from forward ops', \
     '' using (msm(7)):11 with lines lw 2 lc rgb blue notitle, \
     '' using (msm(7)):11:12:13 with yerrorbars pt 7 ps 1.1 lc rgb blue title 'MSM, budgets 1%..100%', \
     '' using (lab(7)):11:2 with labels offset char 0.9,0.8 left font 'sans,9' tc rgb blue notitle, \
     '' using (chen(7)):11:12:13 with yerrorbars pt 5 ps 1.6 lc rgb red title 'Chen sqrt(t)', \
     '' using (full(7)):11:12:13 with yerrorbars pt 9 ps 2 lc rgb green title 'full BPTT (against itself: the noise)', \
     '+' using (0.05):(1.33) every ::0::0 with points pt 6 ps 2.2 lw 2 lc rgb 'black' title 'paper: 95% saved at 1.33x'
set xrange [total_lo / 1.3:1.3]
set xlabel 'total tracked memory / full BPTT''s total (log)'
set title 'Everything the run holds (checkpoints, working set, parameters, data)'
plot datafile using (msm(8)):17 with linespoints dt 2 lw 2 pt 6 ps 1 lc rgb grey title 'predicted from forward ops', \
     '' using (msm(8)):11 with lines lw 2 lc rgb blue notitle, \
     '' using (msm(8)):11:12:13 with yerrorbars pt 7 ps 1.1 lc rgb blue title 'MSM', \
     '' using (lab(8)):11:2 with labels offset char 0.9,0.8 left font 'sans,9' tc rgb blue notitle, \
     '' using (chen(8)):11:12:13 with yerrorbars pt 5 ps 1.6 lc rgb red title 'Chen sqrt(t)', \
     '' using (full(8)):11:12:13 with yerrorbars pt 9 ps 2 lc rgb green title 'full BPTT'
unset logscale x
set xrange [0.95:ops_hi + 0.1]
set xlabel 'forward ops per step (the plan''s; 1 = no recomputation)'
set title 'Time follows the plan''s forward ops'
set key top left
plot datafile using (msm(3)):17 with lines dt 2 lw 2 lc rgb grey title 'predicted: 1 + (ops - 1) t f / S', \
     '' using (msm(3)):11:12:13 with yerrorbars pt 7 ps 1.1 lc rgb blue title 'MSM', \
     '' using (lab3(3)):11:2 with labels offset char 0.9,-0.8 left font 'sans,9' tc rgb blue notitle, \
     '' using (chen(3)):11:12:13 with yerrorbars pt 5 ps 1.6 lc rgb red title 'Chen sqrt(t)', \
     '' using (full(3)):11:12:13 with yerrorbars pt 9 ps 2 lc rgb green title 'full BPTT'
unset multiplot
