struct inner { int l; int v; };
struct outer { struct inner *in; int n; };
int set_n(struct outer *o)
{
	o->n = 1;
	o->in->v = 2;
	return 1;
}
static void helper(struct outer *o)
{
	o->n = 3;
}

#file
void create(struct outer *o)
{
	spin_lock(&o->in->l);
	set_n(o);
	helper(o);
	spin_unlock(&o->in->l);
}
static void helper(struct outer *o)
{
}

#file
#ifdef CONFIG_X
extern int set_n(struct outer *o);
#else
static inline int set_n(struct outer *o)
{
	return 1;
}
#endif
static inline void helper(struct outer *o) { }
