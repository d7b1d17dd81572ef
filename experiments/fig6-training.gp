# fig6-training.gp: loss against iteration, full BPTT and MSM at 5%
# (data from experiments/fig6-training).  Variables: datafile, outfile, term.
if (term eq 'png') set terminal pngcairo size 1200,480 font 'sans,11'
if (term eq 'svg') set terminal svg size 1200,480 font 'sans,11'
set output outfile
set datafile separator ','
set multiplot layout 1,2 title 'Training an LSTM: full BPTT and MSM at 5% of its checkpoint memory (same seed)'
set grid
set key top right
set xlabel 'iteration'
set ylabel 'cross-entropy per step (nats)'
set title 'Copy task (t = 50, hidden 64)'
plot datafile using 1:2 with lines lw 3 lc rgb '#2ca02c' title 'full BPTT', \
     '' using 1:3 every 10 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'MSM, 5% memory (every 10th)'
set title 'Character-level text (t = 100, hidden 128)'
plot datafile using 1:4 with lines lw 3 lc rgb '#2ca02c' title 'full BPTT', \
     '' using 1:5 every 10 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'MSM, 5% memory (every 10th)'
unset multiplot
