"""Where make install put the libraries (generated)."""
LIBDIR = '/usr/local/lib'
