"""Reading input text: files line by line (gzip by content) and blocks of lines split
into fields as numpy arrays, for every format's parser."""
