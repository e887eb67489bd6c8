"""ARO (Yuksekgonul et al., ICLR 2023): VG-Relation, VG-Attribution, COCO-Order and Flickr30k-Order in the world."""
